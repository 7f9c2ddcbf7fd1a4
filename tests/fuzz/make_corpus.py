#!/usr/bin/env python3
"""Writes the fixed seed corpora of the fuzz targets into tests/fuzz/corpus/<target>/.

Usage: /usr/bin/python3 tests/fuzz/make_corpus.py ROOTNET_BINARY

The seeds are files the tests already make: `rootnet synth` sets (annotation
JSON, JPEG frames), tools/io_ref.py's tensor files (torch.save zip and legacy,
safetensors, .npy), the 2D/3DPW annotation fixtures of tests/test_readers.c,
the train config and result files of tests/t_train_cli.sh and t_eval.sh, and
small PNG/JPEG variants of a synth frame written by OpenCV. Each is kept small
(a few KB) so that CI can run every target over its corpus in seconds.
"""
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "corpus")


def put(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def reader_input(option, *files):
    """The dataset-reader targets' input: option byte, then the files separated by NUL bytes."""
    return bytes([option]) + b"\0".join(files)


def synth(binary, tmp, fmt, images):
    out = os.path.join(tmp, fmt)
    subprocess.run([binary, "synth", "--out", out, "--format", fmt, "--images", str(images), "--seed", "3",
                    "--width", "64", "--height", "64"], check=True, stdout=subprocess.DEVNULL)
    return out


KP17 = ("[0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, "
        "100,200,2, 120,210,1, 0,0,0, 0,0,0, 0,0,0, 0,0,0]")
COCO = ('{"images": [{"id": 7, "file_name": "7.jpg", "width": 640, "height": 480}], "annotations": ['
        '{"id": 1, "image_id": 7, "iscrowd": 1, "num_keypoints": 5, "area": 10, "bbox": [10, 10, 50, 50], "keypoints": %s},'
        '{"id": 4, "image_id": 7, "iscrowd": 0, "num_keypoints": 5, "area": 0, "bbox": [10, 10, 50, 50], "keypoints": %s},'
        '{"id": 5, "image_id": 7, "iscrowd": 0, "num_keypoints": 5, "area": 9, "bbox": [10.0, 10.0, 50.0, 50.0], '
        '"keypoints": %s}]}') % (KP17, KP17, KP17)
MPII = ('{"images": [{"id": 3, "file_name": "images/3.jpg", "width": 640, "height": 480}], "annotations": ['
        '{"id": 1, "image_id": 3, "num_keypoints": 0, "bbox": [10, 10, 50, 50], "keypoints": []},'
        '{"id": 2, "image_id": 3, "num_keypoints": 16, "bbox": [10.0, 10.0, 50.0, 50.0], "keypoints": '
        '[0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 33,44,1, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0, 0,0,0]}]}')
PW3D = ('{"images": [{"id": 4, "file_name": "image_00001.jpg", "sequence": "downtown", "width": 1080, '
        '"height": 1920, "cam_param": {"focal": [1000, 1000], "princpt": [500, 400]}}], "annotations": ['
        '{"id": 9, "image_id": 4, "bbox": [400.0, 300.0, 200.0, 400.0], "joint_cam": [0.5, 0.2, 4.0, 0, 0, 1]}]}')
CONFIG = """# rootnet train config (tests/t_train_cli.sh style)
trainset-3d = MuCo
trainset_2d = MSCOCO,MPII
testset = MuPoTS
data-dir = data
backbone = 18
input-size = 64
lr = 1e-3
lr_dec_epoch = 17,19
lr-dec-factor = 10
end_epoch = 2
batch = 4
seed = 7
precision = bf16
loss-scale = dynamic
deterministic = true
no-augment = 1
bogus-key = 3
"""


def huff_seeds(frame):
    """fuzz_huff's input (tests/fuzz/fuzz_huff.c) from JPEGs with a restart marker after every MCU: the
    MCU's block count, the DC and AC tables of the first component and of the others, then one MCU's data."""
    for name, img, quality, blocks in (("noisy420", frame, 95, 6), ("smooth420", cv2.GaussianBlur(frame, (9, 9), 3), 75, 6),
                                       ("gray", cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), 90, 1)):
        j = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality, cv2.IMWRITE_JPEG_RST_INTERVAL, 1])[1].tobytes()
        tables, pos = {}, 2
        while j[pos + 1] != 0xDA:
            n = j[pos + 2] << 8 | j[pos + 3]
            seg = j[pos + 4:pos + 2 + n]
            while j[pos + 1] == 0xC4 and seg:
                count = sum(seg[1:17])
                tables[seg[0]] = seg[1:17 + count]
                seg = seg[17 + count:]
            pos += 2 + n
        start = pos + 2 + (j[pos + 2] << 8 | j[pos + 3])
        ends = [i for i in range(start, len(j) - 1) if j[i] == 0xFF and 0xD0 <= j[i + 1] <= 0xD7]
        mcus = [j[start:ends[0]]] + [j[a + 2:b] for a, b in zip(ends[:3], ends[1:4])]
        head = bytes([blocks - 1]) + tables[0x00] + tables[0x10] + tables.get(0x01, tables[0x00]) + tables.get(0x11, tables[0x10])
        for k, mcu in enumerate(mcus):
            put("huff", f"{name}_{k}.bin", head + mcu)


def main():
    binary = sys.argv[1]
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    tmp = tempfile.mkdtemp()
    try:
        make(binary, tmp)
    finally:
        shutil.rmtree(tmp)


def make(binary, tmp):
    muco = synth(binary, tmp, "muco", 1)
    mupots = synth(binary, tmp, "mupots", 1)
    h36m = synth(binary, tmp, "h36m", 3)
    mj = read(f"{muco}/MuCo/data/MuCo-3DHP.json")
    pj, pb = read(f"{mupots}/MuPoTS/data/MuPoTS-3D.json"), read(f"{mupots}/MuPoTS/bbox/bbox_mupots_output.json")
    ha = f"{h36m}/Human36M/annotations/Human36M_subject1_"
    hd, hc, hj = read(ha + "data.json"), read(ha + "camera.json"), read(ha + "joint_3d.json")
    hb = json.dumps([{"image_id": 0, "bbox": [10.5, 12.0, 30.0, 40.0], "score": 0.9}]).encode()

    put("muco", "train", reader_input(0, mj))
    put("mupots", "test_gt", reader_input(1, pj, pb))
    put("mupots", "test_det", reader_input(5, pj, pb))
    put("h36m", "train", reader_input(0, hd, hc, hj, hb))
    put("h36m", "test_det_p1", reader_input(7, hd, hc, hj, hb))
    put("coco", "train", reader_input(0, COCO.encode()))
    put("coco", "val", reader_input(1, b"", COCO.encode()))
    put("mpii", "train", reader_input(0, MPII.encode()))
    put("pw3d", "test", reader_input(1, b"", PW3D.encode()))
    put("pw3d", "train", reader_input(0, PW3D.encode()))

    put("json", "muco.json", mj)
    put("json", "camera.json", hc)
    put("json", "bbox.json", pb)
    put("json", "empty.json", "[{}, [], [[]], \"\\u00e9\\n\", -0.5e-3, 1E+2, true, false, null, NaN, -Infinity]")

    io_dir = os.path.join(tmp, "io")
    os.makedirs(io_dir)
    subprocess.run([sys.executable, os.path.join(ROOT, "tools/io_ref.py"), "make", io_dir], check=True)
    for n in ("f4.npy", "u1.npy", "b1.npy", "scalar.npy", "v2.npy", "v3.npy", "i8.npy"):
        put("npy", n, read(f"{io_dir}/{n}"))
    put("safetensors", "py.safetensors", read(f"{io_dir}/py.safetensors"))
    for n in ("small_zip.pth", "small_legacy.pth", "nested_legacy.pth.tar"):
        put("pth", n, read(f"{io_dir}/{n}"))
    put("zip", "small_zip.pth", read(f"{io_dir}/small_zip.pth"))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", b"\x80\x02}q\x00.")
        z.writestr("archive/data/0", bytes(range(16)))
    put("zip", "two_entries.zip", buf.getvalue())
    with zipfile.ZipFile(f"{io_dir}/small_zip.pth") as z:
        pkl = [n for n in z.namelist() if n.endswith("data.pkl")][0]
        put("pickle", "small_zip_data.pkl", z.read(pkl))
    put("pickle", "small_legacy.pth", read(f"{io_dir}/small_legacy.pth"))

    frame = cv2.imread(f"{muco}/MuCo/data/unaugmented_set/000000.jpg")
    put("image", "synth.jpg", read(f"{muco}/MuCo/data/unaugmented_set/000000.jpg"))
    small = cv2.resize(frame, (16, 12))
    put("image", "progressive.jpg", cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])[1].tobytes())
    put("image", "gray.jpg", cv2.imencode(".jpg", cv2.cvtColor(small, cv2.COLOR_BGR2GRAY))[1].tobytes())
    put("image", "rgb.png", cv2.imencode(".png", small)[1].tobytes())
    put("image", "gray.png", cv2.imencode(".png", cv2.cvtColor(small, cv2.COLOR_BGR2GRAY))[1].tobytes())
    put("image", "rgb16.png", cv2.imencode(".png", small.astype(np.uint16) * 257)[1].tobytes())
    put("image", "bgra.png", cv2.imencode(".png", cv2.cvtColor(small, cv2.COLOR_BGR2BGRA))[1].tobytes())
    huff_seeds(cv2.resize(frame, (64, 32)) + np.random.default_rng(3).integers(0, 40, (32, 64, 3), dtype=np.uint8))

    put("config", "train.cfg", CONFIG)

    pred = [{"image_id": 3, "ann_id": 5, "root_cam": [120.5, -40.25, 4200.0], "bbox": [10.0, 20.0, 64.0, 64.0],
             "score": 0.75}]
    gt = [{"image_id": 3, "ann_id": 5, "root_cam": [100.0, -50.0, 4000.0], "is_valid": 1, "action": 2}]
    for kind in (0, 1, 2):
        put("results", f"pred_kind{kind}", bytes([kind]) + json.dumps(pred).encode())
    put("results", "gt_plain", bytes([3]) + json.dumps(gt).encode())
    put("results", "gt_mupots", bytes([3]) + json.dumps({"annotations": [
        {"image_id": 3, "id": 5, "is_valid": 1, "keypoints_cam": [[0.0, 0.0, 1000.0]] * 15}]}).encode())

    for i, box in enumerate(("10,20,30,40", "0.5,1e3,2.5e2,7", "10,20,110,220", "-5,-5,30,30")):
        put("bbox", f"box{i}", bytes([i % 2, 10, 7]) + box.encode())


if __name__ == "__main__":
    main()
