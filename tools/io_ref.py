"""Reference files and checks for rootnet's tensor I/O (tests/t_io.sh).

  io_ref.py make DIR          writes checkpoints (both torch.save formats),
                              safetensors and .npy files made by Python into DIR
  io_ref.py check SRC OUT ... for each pair: compares OUT (a safetensors file
                              the C side wrote after loading SRC, or a directory
                              of <name>.npy files it wrote) with SRC loaded by Python

Run with Debian's /usr/bin/python3 (torch, torchvision, numpy).
"""
import collections
import json
import os
import struct
import sys

import numpy as np
import torch

ST_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": np.uint16,
             "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8,
             "U8": np.uint8, "BOOL": np.bool_}
TORCH_ST = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
            torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
            torch.uint8: "U8", torch.bool: "BOOL"}


def small_state(g):
    base = torch.randn(6, 5, generator=g)
    sd = collections.OrderedDict()
    sd["conv1.weight"] = torch.randn(4, 3, 3, 3, generator=g)
    sd["bn1.running_mean"] = torch.randn(4, generator=g).double()
    sd["bn1.num_batches_tracked"] = torch.tensor(123456789012, dtype=torch.int64)
    sd["transposed"] = torch.randn(3, 5, generator=g).t()          # non-contiguous
    sd["slice"] = base[2:4, 1:4]                                    # offset + strides
    sd["expanded"] = torch.randn(3, 1, generator=g).expand(3, 4)    # stride 0
    sd["half"] = torch.randn(2, 3, generator=g).half()
    sd["bf16"] = torch.randn(5, generator=g).bfloat16()
    sd["ints"] = torch.arange(-5, 7, dtype=torch.int32).reshape(3, 4)
    sd["shorts"] = torch.tensor([-300, 2, 30000], dtype=torch.int16)
    sd["chars"] = torch.tensor([-128, 0, 127], dtype=torch.int8)
    sd["bytes"] = torch.tensor([0, 1, 255], dtype=torch.uint8)
    sd["mask"] = torch.tensor([True, False, True])
    sd["empty"] = torch.zeros(0, 3)
    sd["scalar"] = torch.tensor(3.25)
    sd["nan"] = torch.tensor([float("nan"), float("inf"), -0.0])
    sd["base.whole"] = base
    return sd


def nested(g):
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.Linear(2, 3))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    out = net[2](net[1](net[0](torch.randn(2, 3, 4, 4, generator=g)))[..., :2]).sum()
    out.backward()
    opt.step()
    state = collections.OrderedDict(("module.backbone." + k, v) for k, v in net.state_dict().items())
    return {"epoch": 19, "network": state, "optimizer": opt.state_dict()}


def write_safetensors(path, tensors, metadata):
    header, blobs, at = {"__metadata__": metadata}, [], 0
    for name, t in tensors.items():
        raw = t.contiguous().view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 \
            else t.contiguous().numpy().tobytes()
        header[name] = {"dtype": TORCH_ST[t.dtype], "shape": list(t.shape), "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    js = json.dumps(header).encode()
    js += b" " * (-len(js) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(js)) + js + b"".join(blobs))


def make(d):
    import torchvision
    g = torch.Generator().manual_seed(7)
    sd = small_state(g)
    torch.save(sd, os.path.join(d, "small_zip.pth"))
    torch.save(sd, os.path.join(d, "small_legacy.pth"), _use_new_zipfile_serialization=False)
    ck = nested(g)
    torch.save(ck, os.path.join(d, "nested_zip.pth"))
    torch.save(ck, os.path.join(d, "nested_legacy.pth.tar"), _use_new_zipfile_serialization=False)
    torch.manual_seed(3)
    torch.save(torchvision.models.resnet18().state_dict(), os.path.join(d, "resnet18_legacy.pth"),
               _use_new_zipfile_serialization=False)
    write_safetensors(os.path.join(d, "py.safetensors"), sd, {"format": "pt", "note": "made by io_ref.py"})
    rng = np.random.default_rng(5)
    arrays = {"f4": rng.standard_normal((2, 3, 4)).astype("<f4"), "f8": rng.standard_normal(7),
              "i8": rng.integers(-2**40, 2**40, (3, 2)), "i4": rng.integers(-9, 9, 5).astype("<i4"),
              "u1": rng.integers(0, 256, (4, 4)).astype("u1"), "b1": rng.integers(0, 2, 6).astype(bool),
              "scalar": np.array(2.5, "<f4")}
    for name, a in arrays.items():
        np.save(os.path.join(d, name + ".npy"), a)
    with open(os.path.join(d, "v2.npy"), "wb") as f:
        np.lib.format.write_array(f, arrays["f4"], version=(2, 0))
    with open(os.path.join(d, "v3.npy"), "wb") as f:
        np.lib.format.write_array(f, arrays["i8"], version=(3, 0))


def as_entry(v):
    """(dtype name, shape, bytes) of a leaf value, or None when it is skipped."""
    if isinstance(v, torch.Tensor):
        t = v.detach().contiguous()
        raw = t.view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()
        return TORCH_ST[t.dtype], list(t.shape), raw
    if isinstance(v, bool):
        return "BOOL", [], bytes([int(v)])
    if isinstance(v, int):
        return "I64", [], struct.pack("<q", v)
    if isinstance(v, float):
        return "F64", [], struct.pack("<d", v)
    return None


def flatten(v, name, out):
    """The C loader's flattening rules (src/io/tensors.h, rn_pth_read)."""
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(k, bool) or not isinstance(k, (str, int)):
                continue
            flatten(x, f"{name}.{k}" if name else str(k), out)
    elif isinstance(v, (list, tuple)):
        if v and all(type(x) in (int, float) for x in v):
            fl = any(type(x) is float for x in v)
            out[name or "tensor"] = ("F64" if fl else "I64", [len(v)],
                                     np.array(v, "<f8" if fl else "<i8").tobytes())
        else:
            for i, x in enumerate(v):
                flatten(x, f"{name}.{i}" if name else str(i), out)
    else:
        e = as_entry(v)
        if e is not None:
            out[name or "tensor"] = e


def reference(src):
    out = {}
    if src.endswith(".safetensors"):
        return read_safetensors(src)[0]
    if src.endswith(".npy"):
        a = np.load(src)
        names = {np.dtype("<f4"): "F32", np.dtype("<f8"): "F64", np.dtype("<i8"): "I64",
                 np.dtype("<i4"): "I32", np.dtype("u1"): "U8", np.dtype(bool): "BOOL"}
        out[os.path.basename(src)[:-4]] = (names[a.dtype], list(a.shape), a.tobytes())
        return out
    flatten(torch.load(src), "", out)
    return out


def read_safetensors(path):
    buf = open(path, "rb").read()
    (n,) = struct.unpack("<Q", buf[:8])
    header = json.loads(buf[8:8 + n])
    meta = header.pop("__metadata__", {})
    data = buf[8 + n:]
    out = {}
    for name, e in header.items():
        b, end = e["data_offsets"]
        raw = data[b:end]
        assert len(raw) == np.dtype(ST_DTYPES[e["dtype"]]).itemsize * int(np.prod(e["shape"])), name
        out[name] = (e["dtype"], list(e["shape"]), raw)
    return out, meta


def compare(ref, got, what):
    bad = 0
    for name in sorted(set(ref) | set(got)):
        if name not in got or name not in ref:
            print(f"{what}: '{name}' only in {'reference' if name in ref else 'C output'}")
            bad += 1
        elif ref[name] != got[name]:
            print(f"{what}: '{name}' differs: ref {ref[name][:2]} C {got[name][:2]}")
            bad += 1
    return bad


def check_pair(src, dst):
    ref = reference(src)
    if not os.path.isdir(dst):
        got, meta = read_safetensors(dst)
        bad = compare(ref, got, src)
        if src.endswith(".safetensors") and meta != read_safetensors(src)[1]:
            print(f"{src}: metadata differs: {meta}")
            bad += 1
    else:
        got = {}
        for name, (dt, shape, raw) in ref.items():
            if dt == "BF16":
                got[name] = ref[name]
                continue
            a = np.load(os.path.join(dst, name + ".npy"))
            got[name] = (dt, list(a.shape), a.tobytes())
        bad = compare(ref, got, src + " (npy)")
    print(f"{'ok  ' if not bad else 'FAIL'} {src} -> {dst}: {len(ref)} tensors, {bad} mismatches")
    return bad


def main():
    if sys.argv[1] == "make":
        make(sys.argv[2])
        return 0
    pairs = sys.argv[2:]
    failed = sum(1 for i in range(0, len(pairs), 2) if check_pair(pairs[i], pairs[i + 1]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
