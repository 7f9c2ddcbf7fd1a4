#!/usr/bin/env bash
# make bench: every benchmark, each side by side with its reference in one run.
# BENCH=model,infer,limit,precision,data,loader,annot,convs,predict selects a subset (default: all).
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}; export BUILD
want=${BENCH:-model,infer,limit,precision,data,loader,annot,convs,predict}
has() { case ",$want," in *",$1,"*) return 0;; esac; return 1; }
if has model; then echo "== model core: rootnet vs PyTorch (ResNet-50, 256x256, 2 threads)"; bash bench/bench_model.sh "${BENCH_BATCHES:-8 32}" 3; fi
if has infer; then echo "== fast inference: rootnet fp32/bf16 vs PyTorch fp32/bf16 vs onnxruntime (ResNet-50, 256x256, 2 threads)"; bash bench/bench_infer.sh "${BENCH_INFER_BATCHES:-1 8 32}" 3; fi
if has limit; then echo "== training and inference as a share of this CPU's limit (bench_peak), inference vs onnxruntime (ResNet-50, 256x256, 2 threads)"; bash bench/bench_limit.sh 3 5; fi
if has precision; then echo "== mixed precision: rootnet fp32/bf16 vs PyTorch fp32/bf16 autocast (training)"; bash bench/bench_precision.sh "${BENCH_BATCHES:-8 32}" 3; fi
if has data; then echo "== data pipeline: rootnet loader vs PyTorch DataLoader + cv2"; bash bench/bench_data.sh 512 2; fi
if has loader; then echo "== loader on 2048x2048 frames, augmentation on: today's loader (34b3563) vs this one, source vs prepared frames"; bash bench/bench_loader.sh 96 2; fi
if has annot; then echo "== annotation load: rootnet vs json.load + the authors' filter"; "$BUILD/bench_annot" --persons 100000; fi
if has convergence; then echo "== precision vs convergence (synthetic data, ResNet-18 64x64, 20 epochs)"; bash bench/bench_convergence.sh "fp32 bf16 bf16-o2" 20 1; fi
if has predict; then echo "== rootnet predict end to end vs the model's own rate (ResNet-50, 256x256, 500 images)"; bash bench/bench_predict.sh 500 16; fi
if has convs; then
    echo "== per-layer convolutions (oneDNN), as a share of this CPU's measured peaks"
    peak=$("$BUILD/bench_peak" --threads 2); echo "peak: $peak"
    read -r pf pb < <(/usr/bin/python3 -c 'import json,sys; d = json.loads(sys.argv[1])
print(d["fp32_gflops"] or 224, d["bf16_gflops"] or 448)' "$peak")
    OMP_NUM_THREADS=2 "$BUILD/bench_convs" --batch 8 --iters 2 --compute both --peak-f32 "$pf" --peak-bf16 "$pb"
fi
