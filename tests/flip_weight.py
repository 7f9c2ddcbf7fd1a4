"""Flips one bit inside a weight tensor's bytes of a safetensors file, in place (not the header, not the
metadata): python3 tests/flip_weight.py FILE [TENSOR]. TENSOR defaults to the first F32 tensor whose name
starts with neither "optimizer." nor "train."; prints the tensor and the file offset."""
import json, struct, sys

path = sys.argv[1]
data = bytearray(open(path, "rb").read())
(hlen,) = struct.unpack("<Q", data[:8])
head = json.loads(data[8 : 8 + hlen])
names = sorted(k for k, v in head.items() if k != "__metadata__" and v["dtype"] == "F32"
               and not k.startswith(("optimizer.", "train.")))
name = sys.argv[2] if len(sys.argv) > 2 else names[0]
a, b = head[name]["data_offsets"]
at = 8 + hlen + (a + b) // 2
data[at] ^= 0x10
open(path, "wb").write(data)
print(f"{name} byte {at}")
