#!/usr/bin/python3
"""snapcmp.py A B: exit 0 when two safetensors files hold the same tensor names
with bit-identical bytes (metadata ignored), else print the first differences."""
import sys

import numpy as np

from stio import load_safetensors

a, _ = load_safetensors(sys.argv[1])
b, _ = load_safetensors(sys.argv[2])
bad = sorted(set(a) ^ set(b))
bad += [k for k in sorted(set(a) & set(b)) if a[k].dtype != b[k].dtype or a[k].shape != b[k].shape
        or a[k].tobytes() != b[k].tobytes()]
for k in bad[:5]:
    if k in a and k in b and a[k].shape == b[k].shape:
        print("differs: %s (max |a-b| %g)" % (k, float(np.max(np.abs(a[k].astype(np.float64) - b[k].astype(np.float64))))))
    else:
        print("differs: %s (missing or shape)" % k)
print("%d tensors, %d differ" % (len(a), len(bad)))
sys.exit(1 if bad else 0)
