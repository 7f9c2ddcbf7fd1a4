#!/usr/bin/env bash
# No code path casts camera values, k or targets to an integer type (or
# rounds them to integers): a scan of src/ by tests/nocast.py, which first
# checks itself on planted lines. That quantising them matters is shown in
# test_precision (test_quantise, test_k_not_quantised).
set -u
cd "$(dirname "$0")/.."
${PY:-/usr/bin/python3} tests/nocast.py src
