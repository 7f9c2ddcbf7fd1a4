"""Writes the two fuzz inputs too big to commit (tests/regress/README.md):
  safetensors_numel.safetensors  U8 tensor of shape [2^62, 3, 0]: its element count is 0, but
                                 2^62 * 3 overflows int64 on the way (rn_tensor_numel)
  pickle_pop10m.pth              torch zip whose data.pkl is 10 MB of `)0` (empty tuple, POP)
                                 then an empty dict: every popped value used to be kept
usage: make_big.py OUTDIR"""
import json, struct, sys, zipfile

out = sys.argv[1]
header = json.dumps({"backbone.bn1.num_batches_tracked":
                     {"dtype": "U8", "shape": [2 ** 62, 3, 0], "data_offsets": [0, 0]}}).encode()
with open(f"{out}/safetensors_numel.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(header)) + header)

pkl = b"\x80\x02" + b")0" * (5 << 20) + b"}."
with zipfile.ZipFile(f"{out}/pickle_pop10m.pth", "w", zipfile.ZIP_STORED) as z:
    z.writestr("archive/data.pkl", pkl)
