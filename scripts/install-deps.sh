#!/usr/bin/env bash
# Installs every Debian package rootnet needs. Idempotent.
set -euo pipefail
PKGS=(
  build-essential make pkg-config
  libdnnl-dev            # oneDNN 2.6: convolutions and deconvolutions
  libjpeg62-turbo-dev libpng-dev
  libjansson-dev         # annotation JSON
  zlib1g-dev             # export --pth: CRC-32 of the zip records (zip tools and Python's zipfile check them)
  libopenmpi-dev openmpi-bin
  clang libclang-rt-14-dev libomp-14-dev   # make fuzz / t_fuzz: libFuzzer targets (clang, its fuzzer runtime, OpenMP)
  libopenblas0-pthread   # the BLAS PyTorch (the reference and the benchmark peer) should run on; without it Debian falls back to the netlib reference BLAS, 16x slower
  python3 python3-numpy python3-torch python3-torchvision python3-opencv
  libexif-dev            # predict: focal length from a photo's EXIF
  libprotobuf-c-dev protobuf-c-compiler libonnx-dev   # export --onnx: protobuf-c code generated from Debian's onnx.proto
  python3-onnx           # tests: onnx.checker on exported models
  libcairo2-dev fonts-dejavu-core   # pictures: labels in a real font, plots
  python3-pil            # tests: writes EXIF into test images
  libmatio-dev           # PoseNet's MuPoTS-3D evaluation: the .mat prediction files (optional in the Makefile)
  python3-scipy          # tests: the pose metrics' reference (SVD, loadmat)
)
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${PKGS[@]}"
# The ONNX tests run onnxruntime-node, which needs node and npm. This image's nodejs (nodesource)
# ships npm itself and conflicts with Debian's npm package, so install Debian's only when absent.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  $SUDO apt-get install -y -q --no-install-recommends nodejs npm
fi
bash "$(dirname "$0")/install-ort.sh"   # onnxruntime-node for the ONNX tests (npm)
