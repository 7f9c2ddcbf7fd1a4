"""Independent reference for PoseNet's joint targets (rootnet's loader, data/load/joints.c):
the authors' PoseNet data/dataset.py __getitem__ (3DMPPE_POSENET_RELEASE) in numpy and OpenCV,
for the augmentation a `rootnet inspect --skeleton SET` record reports (rot, flip, scale: their
get_aug_config's; the synthetic occlusion changes no target), on the record's joints as their readers give them (tests/ref_readers.py,
read again from the set's own annotation) and its float64 process_bbox box.

usage: ref_targets.py DATA_DIR RECORD.json [RECORD.json ...]
Prints one line per record ("... ok", or the first joint that differs) and a summary line with how
many joints left the crop; exit 1 on any difference.
"""
import json
import sys

import cv2
import numpy as np

import ref_readers

INPUT_SHAPE = (256, 256)
OUTPUT_SHAPE = (64, 64)
DEPTH_DIM = 64
BBOX_3D_SHAPE = (2000, 2000, 2000)

# their data/<set>/<set>.py joints_name and flip_pairs
MUCO = ('Head_top', 'Thorax', 'R_Shoulder', 'R_Elbow', 'R_Wrist', 'L_Shoulder', 'L_Elbow', 'L_Wrist', 'R_Hip',
        'R_Knee', 'R_Ankle', 'L_Hip', 'L_Knee', 'L_Ankle', 'Pelvis', 'Spine', 'Head', 'R_Hand', 'L_Hand', 'R_Toe',
        'L_Toe')
NAMES = {
    'Human36M': ('Pelvis', 'R_Hip', 'R_Knee', 'R_Ankle', 'L_Hip', 'L_Knee', 'L_Ankle', 'Torso', 'Neck', 'Nose',
                 'Head', 'L_Shoulder', 'L_Elbow', 'L_Wrist', 'R_Shoulder', 'R_Elbow', 'R_Wrist', 'Thorax'),
    'MuCo': MUCO,
    'MuPoTS': MUCO[:17],
    'MSCOCO': ('Nose', 'L_Eye', 'R_Eye', 'L_Ear', 'R_Ear', 'L_Shoulder', 'R_Shoulder', 'L_Elbow', 'R_Elbow',
               'L_Wrist', 'R_Wrist', 'L_Hip', 'R_Hip', 'L_Knee', 'R_Knee', 'L_Ankle', 'R_Ankle', 'Thorax', 'Pelvis'),
    'MPII': ('R_Ankle', 'R_Knee', 'R_Hip', 'L_Hip', 'L_Knee', 'L_Ankle', 'Pelvis', 'Thorax', 'Neck', 'Head',
             'R_Wrist', 'R_Elbow', 'R_Shoulder', 'L_Shoulder', 'L_Elbow', 'L_Wrist'),
}
FLIP = {
    'Human36M': ((1, 4), (2, 5), (3, 6), (14, 11), (15, 12), (16, 13)),
    'MuCo': ((2, 5), (3, 6), (4, 7), (8, 11), (9, 12), (10, 13), (17, 18), (19, 20)),
    'MuPoTS': ((2, 5), (3, 6), (4, 7), (8, 11), (9, 12), (10, 13)),
    'MSCOCO': ((1, 2), (3, 4), (5, 6), (7, 8), (9, 10), (11, 12), (13, 14), (15, 16)),
    'MPII': ((0, 5), (1, 4), (2, 3), (10, 15), (11, 14), (12, 13)),
}


def rotate_2d(pt_2d, rot_rad):
    x, y = pt_2d[0], pt_2d[1]
    sn, cs = np.sin(rot_rad), np.cos(rot_rad)
    return np.array([x * cs - y * sn, x * sn + y * cs], dtype=np.float32)


def gen_trans_from_patch_cv(c_x, c_y, src_width, src_height, dst_width, dst_height, scale, rot):
    src_w, src_h = src_width * scale, src_height * scale
    src_center = np.array([c_x, c_y], dtype=np.float32)
    rot_rad = np.pi * rot / 180
    src_downdir = rotate_2d(np.array([0, src_h * 0.5], dtype=np.float32), rot_rad)
    src_rightdir = rotate_2d(np.array([src_w * 0.5, 0], dtype=np.float32), rot_rad)
    dst_center = np.array([dst_width * 0.5, dst_height * 0.5], dtype=np.float32)
    dst_downdir = np.array([0, dst_height * 0.5], dtype=np.float32)
    dst_rightdir = np.array([dst_width * 0.5, 0], dtype=np.float32)
    src = np.zeros((3, 2), dtype=np.float32)
    src[0, :], src[1, :], src[2, :] = src_center, src_center + src_downdir, src_center + src_rightdir
    dst = np.zeros((3, 2), dtype=np.float32)
    dst[0, :], dst[1, :], dst[2, :] = dst_center, dst_center + dst_downdir, dst_center + dst_rightdir
    return cv2.getAffineTransform(np.float32(src), np.float32(dst))


def trans_point2d(pt_2d, trans):
    src_pt = np.array([pt_2d[0], pt_2d[1], 1.]).T
    return np.dot(trans, src_pt)[0:2]


def transform_joint_to_other_db(src_joint, src_name, dst_name):
    new_joint = np.zeros(((len(dst_name),) + src_joint.shape[1:]))
    for src_idx, name in enumerate(src_name):
        if name in dst_name:
            new_joint[dst_name.index(name)] = src_joint[src_idx]
    return new_joint


def getitem(joint_img, joint_vis, img_width, bbox, rot, do_flip, set_name, ref_name, scale=1.0):
    """Their __getitem__'s joint part (steps 2-4 and the training return), for fixed rot, flip, scale."""
    joint_img, joint_vis = joint_img.copy(), joint_vis.copy()
    bb_c_x, bb_c_y = float(bbox[0] + 0.5 * bbox[2]), float(bbox[1] + 0.5 * bbox[3])
    if do_flip:
        bb_c_x = img_width - bb_c_x - 1
    trans = gen_trans_from_patch_cv(bb_c_x, bb_c_y, float(bbox[2]), float(bbox[3]), INPUT_SHAPE[1], INPUT_SHAPE[0],
                                    scale, rot)
    if do_flip:
        joint_img[:, 0] = img_width - joint_img[:, 0] - 1
        for pair in FLIP[set_name]:
            joint_img[pair[0], :], joint_img[pair[1], :] = joint_img[pair[1], :], joint_img[pair[0], :].copy()
            joint_vis[pair[0], :], joint_vis[pair[1], :] = joint_vis[pair[1], :], joint_vis[pair[0], :].copy()
    for i in range(len(joint_img)):
        joint_img[i, 0:2] = trans_point2d(joint_img[i, 0:2], trans)
        joint_img[i, 2] /= (BBOX_3D_SHAPE[0] / 2.)
        joint_img[i, 2] = (joint_img[i, 2] + 1.0) / 2.
        joint_vis[i] *= ((joint_img[i, 0] >= 0) & (joint_img[i, 0] < INPUT_SHAPE[1]) & (joint_img[i, 1] >= 0) &
                         (joint_img[i, 1] < INPUT_SHAPE[0]) & (joint_img[i, 2] >= 0) & (joint_img[i, 2] < 1))
    joint_img[:, 0] = joint_img[:, 0] / INPUT_SHAPE[1] * OUTPUT_SHAPE[1]
    joint_img[:, 1] = joint_img[:, 1] / INPUT_SHAPE[0] * OUTPUT_SHAPE[0]
    joint_img[:, 2] = joint_img[:, 2] * DEPTH_DIM
    joint_img = transform_joint_to_other_db(joint_img, NAMES[set_name], NAMES[ref_name])
    joint_vis = transform_joint_to_other_db(joint_vis, NAMES[set_name], NAMES[ref_name])
    return joint_img.astype(np.float32), (joint_vis > 0).astype(np.float32).reshape(-1), trans


def records(data_dir, name, split, memo={}):
    key = (data_dir, name, split)
    if key not in memo:
        if name in ('MSCOCO', 'MPII'):
            memo[key] = ref_readers.sets_2d(data_dir, name)
        else:
            memo[key] = {'MuCo': lambda: ref_readers.muco(data_dir),
                         'MuPoTS': lambda: ref_readers.mupots(data_dir, False),
                         'Human36M': lambda: ref_readers.human36m(data_dir, split, False, 2)}[name]()
    return memo[key]


def check(data_dir, path):
    r = json.load(open(path))
    name, split, idx = r['dataset'], r['split'], r['index']
    ref = records(data_dir, name, split)[idx]
    j = ref['joints']  # (J, 7) float32: rootnet stores their joints as float32
    # their arrays: Human36M float32 (their reader's dtype), the others float64 (the float32 values rootnet holds)
    dtype = np.float32 if name == 'Human36M' else np.float64
    joint_img = j[:, 0:3].astype(dtype)
    joint_vis = j[:, 6:7].astype(dtype)
    img = cv2.imread(r['image'], cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
    img_width = img.shape[1]
    bbox = ref['bbox']
    want, want_vis, trans = getitem(joint_img, joint_vis, img_width, bbox, r['aug']['rot'], r['aug']['flip'], name,
                                    r['joints']['skeleton'], r['aug']['scale'])
    got = np.array(r['joints']['target'], dtype=np.float32)
    got_vis = np.array(r['joints']['vis'], dtype=np.float32)
    tag = '%s %s %d rot %.3g flip %d scale %.3g' % (name, split, idx, r['aug']['rot'], r['aug']['flip'], r['aug']['scale'])
    if not np.array_equal(np.array(r['trans']).reshape(2, 3), trans):
        return tag + ': trans differs from cv2.getAffineTransform', 0
    if got.shape != want.shape:
        return tag + ': %s rows, reference %s' % (got.shape, want.shape), 0
    bad = np.argwhere((got.view(np.uint32) != want.view(np.uint32)).any(1) | (got_vis != want_vis))
    if len(bad):
        k = bad[0][0]
        return tag + ': row %d: rootnet %s vis %g, reference %s vis %g' % (k, got[k], got_vis[k], want[k], want_vis[k]), 0
    left = int(np.sum((want_vis == 0) & (transform_joint_to_other_db(joint_vis, NAMES[name], NAMES[r['joints']['skeleton']])[:, 0] > 0)))
    return tag + ': ok', left


def main():
    data_dir, files = sys.argv[1], sys.argv[2:]
    n_ok, left_total = 0, 0
    for f in files:
        line, left = check(data_dir, f)
        print(line)
        n_ok += line.endswith(': ok')
        left_total += left
    print('%d of %d records equal the reference; %d joints left the crop' % (n_ok, len(files), left_total))
    return 0 if n_ok == len(files) else 1


if __name__ == '__main__':
    sys.exit(main())
