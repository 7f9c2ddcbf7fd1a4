#!/usr/bin/python3
"""PyTorch side of `make bench`: the same RootNet (tools/reference.py), timed
the way `rootnet bench` times itself, with a careful user's best settings:
channels_last, torch.set_num_threads(T), and (set by the caller)
GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736.
Prints one JSON line in rootnet bench's format.

--device cuda (bench/device_check.sh): the peer on one GPU with the settings of
shared/NOTES-gpu.md -- cudnn.benchmark, channels_last, fused Adam, TF32 off for
fp32 (--tf32 allows it), bf16 autocast, fp16 autocast + GradScaler,
--compile: torch.compile (default mode) -- timed with CUDA events, one JSON
line per setting with the peak GPU memory (torch.cuda.max_memory_allocated).
--suite runs each of SETTING:MODE:BATCH (e.g. bf16:train:128,bf16c:infer:128;
settings fp32, bf16, fp16, bf16c = bf16 + torch.compile) in this one process."""
import argparse
import json
import os
import resource
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import DEPTH_DIM, make_net, rootnet_loss  # noqa: E402


def inputs(a, batch, dev=None):
    """Random inputs as rootnet bench makes them: images, k, targets inside the output grid (PoseNet: (N, J, 3),
    z in depth bins), vis and have_depth 1."""
    x = torch.randn(batch, 3, a.size, a.size, device=dev).contiguous(memory_format=torch.channels_last)
    k = torch.rand(batch, 1, device=dev) * 4000 + 8000
    o = a.size // 4
    if a.net == "posenet":
        J = a.joints
        t = torch.stack([torch.rand(batch, J, device=dev) * o, torch.rand(batch, J, device=dev) * o,
                         torch.rand(batch, J, device=dev) * DEPTH_DIM], 2)
        return x, k, t, torch.ones(batch, J, 1, device=dev), torch.ones(batch, 1, device=dev)
    t = torch.stack([torch.rand(batch, device=dev) * o, torch.rand(batch, device=dev) * o,
                     torch.rand(batch, device=dev) * 4000 + 2000], 1)
    return x, k, t, torch.ones(batch, 1, device=dev), torch.ones(batch, 1, device=dev)


def median(times):
    s = sorted(times)
    return s[len(s) // 2] if len(s) % 2 else 0.5 * (s[len(s) // 2 - 1] + s[len(s) // 2])


def gpu_one(a, setting, mode, batch):
    """One GPU setting: fresh model and optimizer, warm-up, timed steps (CUDA events), peak memory."""
    dev = torch.device("cuda")
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = a.tf32
    torch.backends.cuda.matmul.allow_tf32 = a.tf32
    torch.manual_seed(0)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    dtype = {"fp32": None, "bf16": torch.bfloat16, "bf16c": torch.bfloat16, "fp16": torch.float16}[setting]
    m = make_net(a.net, a.backbone, a.joints).to(dev).to(memory_format=torch.channels_last)
    m.train(mode == "train")
    x, k, t, v, hd = inputs(a, batch, dev)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3, fused=True)
    scaler = torch.amp.GradScaler("cuda", enabled=setting == "fp16")
    net = torch.compile(m) if setting == "bf16c" else m

    def step():
        with torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None):
            if mode == "train":
                opt.zero_grad(set_to_none=True)
                loss = rootnet_loss(net(x, k).float(), t, v, hd)
            else:
                with torch.inference_mode():
                    net(x, k)
                return
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    c0 = time.perf_counter()
    step()
    torch.cuda.synchronize()
    first_s = time.perf_counter() - c0
    for _ in range(a.warmup):
        step()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(a.iters)]
    for e0, e1 in ev:
        e0.record()
        step()
        e1.record()
    torch.cuda.synchronize()
    times = [e0.elapsed_time(e1) / 1000 for e0, e1 in ev]
    med = median(times)
    r = {"impl": "pytorch", "device": torch.cuda.get_device_name(0), "setting": setting, "mode": mode,
         "net": a.net, "backbone": a.backbone, "size": a.size, "batch": batch, "tf32": a.tf32, "median_s": round(med, 6),
         "images_per_s": round(batch / med, 2), "peak_gpu_mb": round(torch.cuda.max_memory_allocated() / 2**20, 1),
         "first_step_s": round(first_s, 3), "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
         "steps_s": [round(x, 6) for x in times]}
    del net, m, opt, x
    return r


def gpu_main(a):
    runs = [s.split(":") for s in a.suite.split(",")] if a.suite else \
        [["bf16c" if a.compile else "bf16" if a.bf16 else "fp16" if a.fp16 else "fp32", a.mode, str(a.batch)]]
    rc = 0
    for setting, mode, batch in runs:
        try:
            r = gpu_one(a, setting, mode, int(batch))
        except Exception as e:  # one failed setting (out of memory, a compile error) must not hide the others
            r = {"impl": "pytorch", "setting": setting, "mode": mode, "batch": int(batch),
                 "error": (type(e).__name__ + ": " + str(e)).splitlines()[0][:300]}
            rc = 1
        print(json.dumps(r), flush=True)
    return rc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["train", "infer"], default="train")
    ap.add_argument("--net", choices=["rootnet", "posenet"], default="rootnet")
    ap.add_argument("--joints", type=int, default=18, help="posenet: J (Human36M 18, MuCo 21)")
    ap.add_argument("--backbone", type=int, default=50)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--bf16", action="store_true", help="CPU autocast to bfloat16")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--fp16", action="store_true", help="cuda: fp16 autocast + GradScaler")
    ap.add_argument("--compile", action="store_true", help="cuda: bf16 autocast + torch.compile")
    ap.add_argument("--tf32", action="store_true", help="cuda: allow TF32 in fp32 (PyTorch's conv default)")
    ap.add_argument("--suite", default="", help="cuda: SETTING:MODE:BATCH,... in one process")
    a = ap.parse_args()
    if a.device == "cuda":
        return gpu_main(a)
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    m = make_net(a.net, a.backbone, a.joints).to(memory_format=torch.channels_last)
    x, k, t, v, hd = inputs(a, a.batch)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    times = []
    m.train(a.mode == "train")
    for i in range(a.warmup + a.iters):
        t0 = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
            if a.mode == "train":
                opt.zero_grad()
                loss = rootnet_loss(m(x, k).float(), t, v, hd)
                loss.backward()
                opt.step()
            else:
                with torch.no_grad():
                    m(x, k)
        if i >= a.warmup:
            times.append(time.perf_counter() - t0)
    s = sorted(times)
    med = s[len(s) // 2] if len(s) % 2 else 0.5 * (s[len(s) // 2 - 1] + s[len(s) // 2])
    print(json.dumps({"impl": "pytorch", "mode": a.mode, "net": a.net, "backbone": a.backbone, "size": a.size, "batch": a.batch,
                      "threads": a.threads, "bf16": a.bf16, "median_s": round(med, 6),
                      "images_per_s": round(a.batch / med, 4),
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                      "steps_s": [round(x, 6) for x in times]}))


if __name__ == "__main__":
    sys.exit(main())
