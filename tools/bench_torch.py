#!/usr/bin/python3
"""PyTorch side of `make bench`: the same RootNet (tools/reference.py), timed
the way `rootnet bench` times itself, with a careful user's best settings:
channels_last, torch.set_num_threads(T), and (set by the caller)
GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736.
Prints one JSON line in rootnet bench's format."""
import argparse
import json
import os
import resource
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import ResPoseNet, rootnet_loss  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["train", "infer"], default="train")
    ap.add_argument("--backbone", type=int, default=50)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--bf16", action="store_true", help="CPU autocast to bfloat16")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    m = ResPoseNet(a.backbone).to(memory_format=torch.channels_last)
    x = torch.randn(a.batch, 3, a.size, a.size).contiguous(memory_format=torch.channels_last)
    k = torch.rand(a.batch, 1) * 4000 + 8000
    o = a.size // 4
    t = torch.stack([torch.rand(a.batch) * o, torch.rand(a.batch) * o, torch.rand(a.batch) * 4000 + 2000], 1)
    v = torch.ones(a.batch, 1)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    times = []
    m.train(a.mode == "train")
    for i in range(a.warmup + a.iters):
        t0 = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
            if a.mode == "train":
                opt.zero_grad()
                loss = rootnet_loss(m(x, k).float(), t, v, v)
                loss.backward()
                opt.step()
            else:
                with torch.no_grad():
                    m(x, k)
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
    s = sorted(times)
    med = s[len(s) // 2] if len(s) % 2 else 0.5 * (s[len(s) // 2 - 1] + s[len(s) // 2])
    print(json.dumps({"impl": "pytorch", "mode": a.mode, "backbone": a.backbone, "size": a.size, "batch": a.batch,
                      "threads": a.threads, "bf16": a.bf16, "median_s": round(med, 6),
                      "images_per_s": round(a.batch / med, 4),
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                      "steps_s": [round(x, 6) for x in times]}))


if __name__ == "__main__":
    main()
