#!/usr/bin/env bash
# Installs onnxruntime-node (pinned in tools/ort/package-lock.json) into tools/ort/node_modules for
# the ONNX tests and benchmarks. --ignore-scripts: the package's install script fetches GPU files
# from a host we cannot reach; the CPU runtime ships inside the package. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/../tools/ort"
if node -e "require('onnxruntime-node')" 2>/dev/null; then exit 0; fi
npm ci --ignore-scripts --no-audit --no-fund
node -e "require('onnxruntime-node')"
