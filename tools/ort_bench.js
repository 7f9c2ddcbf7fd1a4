#!/usr/bin/env node
// onnxruntime side of bench/bench_infer.sh: times a RootNet ONNX model (inputs
// image N x 3 x S x S and k N x 1, in the model's input order) the way `rootnet
// bench --mode infer` times itself, on the CPU execution provider with
// intra-op threads T (inter-op 1, sequential), all graph optimisations.
// Prints one JSON line in rootnet bench's format.
// usage: node tools/ort_bench.js MODEL.onnx BATCH ITERS WARMUP THREADS [SIZE]
'use strict';
const path = require('path');
const ort = require(path.join(__dirname, 'ort', 'node_modules', 'onnxruntime-node'));

async function main() {
    const [model, batch, iters, warmup, threads, size = '256'] = process.argv.slice(2);
    if (!model || !(+batch > 0) || !(+iters > 0) || !(+warmup >= 0) || !(+threads > 0)) {
        console.error('usage: node tools/ort_bench.js MODEL.onnx BATCH ITERS WARMUP THREADS [SIZE]');
        process.exit(2);
    }
    const n = +batch, s = +size;
    const sess = await ort.InferenceSession.create(model, {
        executionProviders: ['cpu'], intraOpNumThreads: +threads, interOpNumThreads: 1,
        executionMode: 'sequential', graphOptimizationLevel: 'all'});
    const img = new Float32Array(n * 3 * s * s), k = new Float32Array(n);
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296);
    for (let i = 0; i < img.length; i++) img[i] = rnd() * 2 - 1;
    for (let i = 0; i < n; i++) k[i] = 8000 + 4000 * rnd();
    const feeds = {};
    feeds[sess.inputNames[0]] = new ort.Tensor('float32', img, [n, 3, s, s]);
    feeds[sess.inputNames[1]] = new ort.Tensor('float32', k, [n, 1]);
    const times = [];
    for (let i = 0; i < +warmup + +iters; i++) {
        const t0 = process.hrtime.bigint();
        await sess.run(feeds);
        if (i >= +warmup) times.push(Number(process.hrtime.bigint() - t0) / 1e9);
    }
    const t = [...times].sort((a, b) => a - b), m = t.length;
    const med = m % 2 ? t[(m - 1) / 2] : 0.5 * (t[m / 2 - 1] + t[m / 2]);
    console.log(JSON.stringify({impl: 'onnxruntime', version: ort.env.versions ? ort.env.versions.common : '',
        mode: 'infer', size: s, batch: n, threads: +threads, median_s: +med.toFixed(6),
        images_per_s: +(n / med).toFixed(4), steps_s: times.map(x => +x.toFixed(6))}));
}
main().catch(e => { console.error('ort_bench: ' + e.message); process.exit(1); });
