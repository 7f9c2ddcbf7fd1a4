"""Tiny, dependency-free safetensors and checkpoint helpers for the reference
tools (Debian has no python3-safetensors). Written from the format spec:
8-byte little-endian header length, a JSON header, then the raw data."""
import json
import struct

import numpy as np
import torch

DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64,
          "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_}
NAMES = {np.dtype(v): k for k, v in DTYPES.items()}


def save_safetensors(path, tensors, metadata=None):
    """tensors: dict name -> numpy array or torch tensor (written in insertion order)."""
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    for name, t in tensors.items():
        a = t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
        a = np.ascontiguousarray(a)
        b = a.tobytes()
        header[name] = {"dtype": NAMES[a.dtype], "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def load_safetensors(path):
    """Returns (dict name -> numpy array, metadata dict)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    out = {}
    base = 8 + n
    for name, d in header.items():
        a, b = d["data_offsets"]
        out[name] = np.frombuffer(data[base + a:base + b], dtype=DTYPES[d["dtype"]]).reshape(d["shape"]).copy()
    return out, meta
