// Runs an ONNX model in onnxruntime (onnxruntime-node from tools/ort/node_modules, CPU) on .npy inputs.
//   node tools/ort_run.js MODEL.onnx OUT.npy NAME=IN.npy [NAME=IN.npy ...]
// Inputs and the first output are float32 C-order .npy files (v1.0 header).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, 'ort', 'node_modules', 'onnxruntime-node'));

function readNpy(file) {
  const b = fs.readFileSync(file);
  if (b.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(file + ': not an .npy file');
  const hlen = b.readUInt16LE(8);
  const header = b.toString('latin1', 10, 10 + hlen);
  if (!/'descr': '<f4'/.test(header) || /'fortran_order': True/.test(header))
    throw new Error(file + ': want little-endian float32 in C order, header ' + header.trim());
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const start = 10 + hlen;
  const data = new Float32Array(b.buffer.slice(b.byteOffset + start, b.byteOffset + b.length));
  return new ort.Tensor('float32', data, shape);
}

function writeNpy(file, t) {
  let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + t.dims.join(', ') +
      (t.dims.length === 1 ? ',' : '') + '), }';
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1, pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), Buffer.from(t.data.buffer)]));
}

async function main() {
  const [model, out, ...ins] = process.argv.slice(2);
  if (!model || !out || !ins.length) throw new Error('usage: node ort_run.js MODEL.onnx OUT.npy NAME=IN.npy ...');
  const feeds = {};
  for (const a of ins) {
    const i = a.indexOf('=');
    feeds[a.slice(0, i)] = readNpy(a.slice(i + 1));
  }
  const s = await ort.InferenceSession.create(model, {intraOpNumThreads: 2, interOpNumThreads: 1});
  const r = await s.run(feeds);
  writeNpy(out, r[s.outputNames[0]]);
}

main().catch((e) => {
  console.error('ort_run: ' + e.message);
  process.exit(1);
});
