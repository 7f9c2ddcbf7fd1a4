"""Independent reference for the rootnet readers: re-implements the authors'
load_data (3DMPPE_ROOTNET_RELEASE MuCo.py, MuPoTS.py, Human36M.py; MSCOCO.py and
MPII.py for the joints) in numpy from the JSON files, and compares every record
with `rootnet dataset --dump`; with `joints`, every record's joints as the
authors' PoseNet readers compute them (3DMPPE_POSENET_RELEASE data/<set>/<set>.py)
with `rootnet dataset --joints` (N, J, 7): img x, y, depth - root depth, cam X,
Y, Z, vis), exactly: the float32 of their float64 (MuCo, MuPoTS, MSCOCO, MPII),
and Human3.6M in float32 as theirs (np.float32 R, t, f, c, joints).

usage: ref_readers.py SET DATA_DIR SPLIT DUMP.csv [det|gt] [protocol]
       ref_readers.py joints SET DATA_DIR SPLIT JOINTS.npy [det|gt] [protocol]
       ref_readers.py synth DATA_DIR DUMP.csv [images]
Prints "ok N records" or the first mismatch; exit 1 on mismatch.
"""
import csv
import json
import math
import sys

import numpy as np

INPUT_SHAPE = (256, 256)
BBOX_REAL = (2000.0, 2000.0)


def process_bbox(bbox, width, height):
    x, y, w, h = bbox
    x1 = np.max((0, x))
    y1 = np.max((0, y))
    x2 = np.min((width - 1, x1 + np.max((0, w - 1))))
    y2 = np.min((height - 1, y1 + np.max((0, h - 1))))
    if w * h > 0 and x2 >= x1 and y2 >= y1:
        bbox = np.array([x1, y1, x2 - x1, y2 - y1])
    else:
        return None
    w = bbox[2]
    h = bbox[3]
    c_x = bbox[0] + w / 2.
    c_y = bbox[1] + h / 2.
    aspect_ratio = INPUT_SHAPE[1] / INPUT_SHAPE[0]
    if w > aspect_ratio * h:
        h = w / aspect_ratio
    elif w < aspect_ratio * h:
        w = h * aspect_ratio
    bbox[2] = w * 1.25
    bbox[3] = h * 1.25
    bbox[0] = c_x - bbox[2] / 2.
    bbox[1] = c_y - bbox[3] / 2.
    return bbox


def k_value(f, area):
    return math.sqrt(BBOX_REAL[0] * BBOX_REAL[1] * f[0] * f[1] / area)


def rec(path, bbox, root_img, root_cam, f, c, score=1.0, joints=None):
    area = bbox[2] * bbox[3]
    return dict(path=path, bbox=list(bbox), area=area, k=k_value(f, area), root_img=list(root_img),
                root_cam=list(root_cam), f=list(f), c=list(c), score=score, joints=joints)


def pack(joint_img, joint_cam, joint_vis):
    """(J, 7) float32: joint_img, joint_cam, vis, each rounded once from the reader's values."""
    return np.concatenate([np.asarray(joint_img, np.float32), np.asarray(joint_cam, np.float32),
                           np.asarray(joint_vis, np.float32).reshape(-1, 1)], 1)


def mu_joints(ann, joint_num, root=14):
    """MuCo.py / MuPoTS.py (use_gt_info): joint_img = keypoints_img with depth - root depth."""
    joint_cam = np.array(ann['keypoints_cam'])
    root_cam = joint_cam[root]
    joint_img = np.array(ann['keypoints_img'])
    joint_img = np.concatenate([joint_img, joint_cam[:, 2:]], 1)
    joint_img[:, 2] = joint_img[:, 2] - root_cam[2]
    return pack(joint_img, joint_cam, np.ones((joint_num, 1)))


def h36m_joints(joint_world, R, t, f, c, use_dot=False):
    """Human36M.py: float32 throughout; Thorax added in world space. world2cam's R . X is summed
    left to right as rootnet does (use_dot: their np.dot, whose BLAS may sum in another order)."""
    joint_world = np.array(joint_world, dtype=np.float32)
    R, t = np.array(R, dtype=np.float32).reshape(3, 3), np.array(t, dtype=np.float32).reshape(3)
    f, c = np.array(f, dtype=np.float32).reshape(2), np.array(c, dtype=np.float32).reshape(2)
    thorax = ((joint_world[11, :] + joint_world[14, :]) * 0.5).reshape((1, 3))
    joint_world = np.concatenate((joint_world, thorax), axis=0)
    if use_dot:
        joint_cam = np.dot(R, joint_world.transpose(1, 0)).transpose(1, 0) + t.reshape(1, 3)
    else:
        w = joint_world
        joint_cam = np.stack([R[i, 0] * w[:, 0] + R[i, 1] * w[:, 1] + R[i, 2] * w[:, 2] for i in range(3)], 1)
        joint_cam = joint_cam + t.reshape(1, 3)
    x = joint_cam[:, 0] / (joint_cam[:, 2] + np.float32(1e-8)) * f[0] + c[0]
    y = joint_cam[:, 1] / (joint_cam[:, 2] + np.float32(1e-8)) * f[1] + c[1]
    joint_img = np.concatenate((x[:, None], y[:, None], joint_cam[:, 2:3]), 1)
    joint_img[:, 2] = joint_img[:, 2] - joint_cam[0, 2]
    assert joint_cam.dtype == np.float32 and joint_img.dtype == np.float32
    return pack(joint_img, joint_cam, np.ones((18, 1)))


def coco_joints(kp):
    """MSCOCO.py (train): 17 keypoints, Thorax and Pelvis the means with v the product, vis v > 0."""
    joint_img = np.array(kp).reshape(-1, 3)
    thorax = (joint_img[5, :] + joint_img[6, :]) * 0.5
    thorax[2] = joint_img[5, 2] * joint_img[6, 2]
    pelvis = (joint_img[11, :] + joint_img[12, :]) * 0.5
    pelvis[2] = joint_img[11, 2] * joint_img[12, 2]
    joint_img = np.concatenate((joint_img, thorax.reshape(1, 3), pelvis.reshape(1, 3)), axis=0)
    joint_vis = (joint_img[:, 2].copy().reshape(-1, 1) > 0)
    joint_img[:, 2] = 0
    return pack(joint_img, np.zeros((19, 3)), joint_vis)


def mpii_joints(kp):
    """MPII.py: 16 keypoints, vis as stored."""
    joint_img = np.array(kp).reshape(16, 3)
    joint_vis = joint_img[:, 2].copy().reshape(-1, 1)
    joint_img[:, 2] = 0
    return pack(joint_img, np.zeros((16, 3)), joint_vis)


def keep_2d(bbox, width, height, positive):
    """RootNet's keep rule for the 2D sets: `positive` (COCO: the annotation's area, MPII: w * h) > 0,
    the clipped box non-empty, the grown box of positive area."""
    x, y, w, h = bbox
    x1, y1 = max(0, x), max(0, y)
    x2, y2 = min(width - 1, x1 + max(0, w - 1)), min(height - 1, y1 + max(0, h - 1))
    if not (positive > 0 and x2 >= x1 and y2 >= y1):
        return False
    bw, bh = x2 - x1, y2 - y1
    aspect = INPUT_SHAPE[1] / INPUT_SHAPE[0]
    if bw > aspect * bh:
        bh = bw / aspect
    elif bw < aspect * bh:
        bw = bh * aspect
    return bw * 1.25 * bh * 1.25 > 0


def sets_2d(data_dir, name):
    """RootNet's MSCOCO / MPII records (crowd and keypoint-less annotations skipped) with their joints."""
    coco = name == 'MSCOCO'
    rel = 'MSCOCO/annotations/person_keypoints_train2017.json' if coco else 'MPII/annotations/train.json'
    db = json.load(open(data_dir + '/' + rel))
    imgs = {i['id']: i for i in db['images']}
    out = []
    for a in db['annotations']:
        img = imgs.get(a['image_id'])
        if img is None or (coco and a['iscrowd']) or a['num_keypoints'] == 0:
            continue
        if not keep_2d(a['bbox'], img['width'], img['height'], a['area'] if coco else a['bbox'][2] * a['bbox'][3]):
            continue
        prefix = 'MSCOCO/images/train2017/' if coco else 'MPII/'
        j = coco_joints(a['keypoints']) if coco else mpii_joints(a['keypoints'])
        out.append(dict(path=prefix + img['file_name'], joints=j, bbox=process_bbox(a['bbox'], img['width'], img['height'])))
    return out


def muco(data_dir):
    db = json.load(open(data_dir + '/MuCo/data/MuCo-3DHP.json'))
    anns_of = {}
    for a in db['annotations']:
        anns_of.setdefault(a['image_id'], []).append(a)
    out, root = [], 14
    for img in db['images']:
        anns = anns_of.get(img['id'], [])
        if not anns:
            continue
        depths = [a['keypoints_cam'][root][2] for a in anns]
        closest = depths.index(min(depths))
        picks = [closest]
        for i in range(len(anns)):
            if i == closest:
                continue
            ok = True
            for j in range(len(anns)):
                if i == j:
                    continue
                d = (np.array(anns[i]['keypoints_cam'][root]) - np.array(anns[j]['keypoints_cam'][root])) ** 2
                if math.sqrt(np.sum(d[:2])) < 500 or math.sqrt(np.sum(d)) < 500:
                    ok = False
            if ok:
                picks.append(i)
        for p in picks:
            cam = np.array(anns[p]['keypoints_cam'][root])
            if cam[2] < 1500 or cam[2] > 7500:
                continue
            bbox = process_bbox(anns[p]['bbox'], img['width'], img['height'])
            if bbox is None:
                continue
            ri = list(anns[p]['keypoints_img'][root]) + [cam[2]]
            out.append(rec('MuCo/data/' + img['file_name'], bbox, ri, cam, img['f'], img['c'],
                           joints=mu_joints(anns[p], 21)))
    return out


def mupots(data_dir, det):
    db = json.load(open(data_dir + '/MuPoTS/data/MuPoTS-3D.json'))
    imgs = {i['id']: i for i in db['images']}
    out, root = [], 14
    prefix = 'MuPoTS/data/MultiPersonTestSet/'
    if det:
        for d in json.load(open(data_dir + '/MuPoTS/bbox/bbox_mupots_output.json')):
            img = imgs[d['image_id']]
            fx, fy, cx, cy = img['intrinsic']
            bbox = process_bbox(np.array(d['bbox']).reshape(4), img['width'], img['height'])
            if bbox is None:
                continue
            out.append(rec(prefix + img['file_name'], bbox, [1, 1, 1], [1, 1, 1], [fx, fy], [cx, cy], d['score'],
                           joints=pack(np.zeros((17, 3)), np.zeros((17, 3)), np.zeros((17, 1)))))
        return out
    for a in db['annotations']:
        if a['is_valid'] == 0:
            continue
        img = imgs[a['image_id']]
        fx, fy, cx, cy = img['intrinsic']
        bbox = process_bbox(np.array(a['bbox']), img['width'], img['height'])
        if bbox is None:
            continue
        cam = a['keypoints_cam'][root]
        ri = list(a['keypoints_img'][root]) + [cam[2]]
        out.append(rec(prefix + img['file_name'], bbox, ri, cam, [fx, fy], [cx, cy], joints=mu_joints(a, 17)))
    return out


def human36m(data_dir, split, det, protocol):
    subjects = {(1, 'train'): [1, 5, 6, 7, 8, 9], (2, 'train'): [1, 5, 6, 7, 8],
                (1, 'test'): [11], (2, 'test'): [9, 11]}[(protocol, split)]
    ratio = 5 if split == 'train' else 64
    boxes = {}
    if det:
        for d in json.load(open(data_dir + '/Human36M/bbox/bbox_human36m_output.json')):
            boxes[str(d['image_id'])] = np.array(d['bbox'])
    out = []
    for s in subjects:
        base = data_dir + '/Human36M/annotations/Human36M_subject%d_' % s
        db = json.load(open(base + 'data.json'))
        cams = json.load(open(base + 'camera.json'))
        joints = json.load(open(base + 'joint_3d.json'))
        imgs = {i['id']: i for i in db['images']}
        for a in db['annotations']:
            img = imgs[a['image_id']]
            if img['subject'] not in subjects or img['frame_idx'] % ratio != 0:
                continue
            cp = cams[str(img['cam_idx'])]
            R, t = np.array(cp['R'], np.float64), np.array(cp['t'], np.float64).reshape(3)
            f, c = np.array(cp['f'], np.float64), np.array(cp['c'], np.float64)
            frame = joints[str(img['action_idx'])][str(img['subaction_idx'])][str(img['frame_idx'])]
            w = np.array(frame)[0]
            cam = R.dot(w) + t
            ri = [cam[0] / (cam[2] + 1e-8) * f[0] + c[0], cam[1] / (cam[2] + 1e-8) * f[1] + c[1], cam[2]]
            box = boxes[str(a['image_id'])] if det else np.array(a['bbox'])
            bbox = process_bbox(box, img['width'], img['height'])
            if bbox is None:
                continue
            r = rec('Human36M/images/' + img['file_name'], bbox, ri, cam, f, c,
                    joints=h36m_joints(frame, cp['R'], cp['t'], cp['f'], cp['c']))
            r['joints_dot'] = h36m_joints(frame, cp['R'], cp['t'], cp['f'], cp['c'], use_dot=True)
            out.append(r)
    return out


def close(a, b, rel=2e-5, abs_=2e-3):
    return abs(float(a) - float(b)) <= abs_ + rel * abs(float(b))


def synth_checks(data_dir, dump, with_images):
    """Synthetic sets: root_img reprojects from root_cam with the record's f, c;
    and (with images) the pixel at the root is the figure's magenta pelvis."""
    got = list(csv.DictReader(open(dump)))
    worst, magenta, visible = 0.0, 0, 0
    for g in got:
        X, Y, Z = float(g['cx']), float(g['cy']), float(g['cz'])
        u = X / Z * float(g['fx']) + float(g['px'])
        v = Y / Z * float(g['fy']) + float(g['py'])
        worst = max(worst, abs(u - float(g['rx'])), abs(v - float(g['ry'])), abs(Z - float(g['rz'])))
        if with_images and float(g['vis']) > 0:
            import cv2
            img = cv2.imread(data_dir + '/' + g['path'])
            x, y = int(round(u)), int(round(v))
            if 1 <= x < img.shape[1] - 1 and 1 <= y < img.shape[0] - 1:
                visible += 1
                patch = img[y - 1:y + 2, x - 1:x + 2].reshape(-1, 3).astype(int)  # BGR
                if ((patch[:, 2] > 150) & (patch[:, 0] > 150) & (patch[:, 1] < 120)).any():
                    magenta += 1
    if worst > 0.01:
        print('reprojection error %.4g px' % worst)
        return 1
    if with_images and (visible == 0 or magenta < 0.75 * visible):
        print('magenta pelvis found at only %d of %d visible roots' % (magenta, visible))
        return 1
    print('ok %d records reproject (max err %.2g px), pelvis at root %d/%d' % (len(got), worst, magenta, visible))
    return 0


def joints_main(name, data_dir, split, path, det, protocol):
    """Every record's joints against the reference, bit for bit (float32)."""
    if name in ('MSCOCO', 'MPII'):
        ref = sets_2d(data_dir, name)
    else:
        ref = {'MuCo': lambda: muco(data_dir), 'MuPoTS': lambda: mupots(data_dir, det),
               'Human36M': lambda: human36m(data_dir, split, det, protocol)}[name]()
    got = np.load(path)
    if got.dtype != np.float32 or got.ndim != 3 or got.shape[2] != 7:
        print('%s: dtype %s shape %s, expected float32 (N, J, 7)' % (path, got.dtype, got.shape))
        return 1
    if len(got) != len(ref):
        print('count mismatch: rootnet %d, reference %d' % (len(got), len(ref)))
        return 1
    fields = ['img x', 'img y', 'img depth', 'cam X', 'cam Y', 'cam Z', 'vis']
    dot_differs = 0
    for i, r in enumerate(ref):
        want = r['joints']
        if got[i].shape != want.shape:
            print('record %d: rootnet joints %s, reference %s' % (i, got[i].shape, want.shape))
            return 1
        bad = np.argwhere(got[i].view(np.uint32) != want.view(np.uint32))
        if len(bad):
            j, k = bad[0]
            print('record %d joint %d %s: rootnet %.9g, reference %.9g (%d values differ)'
                  % (i, j, fields[k], got[i][j, k], want[j, k], len(bad)))
            return 1
        if 'joints_dot' in r:
            dot_differs += int(np.sum(r['joints_dot'] != want))
    sizes = 'x'.join(str(d) for d in got.shape)
    note = ', %d values differ by np.dot\'s BLAS summation order' % dot_differs if name == 'Human36M' else ''
    print('ok %d records, joints %s bit-equal%s' % (len(ref), sizes, note))
    return 0


def main():
    if sys.argv[1] == 'joints':
        a = sys.argv[2:]
        return joints_main(a[0], a[1], a[2], a[3], len(a) > 4 and a[4] == 'det', int(a[5]) if len(a) > 5 else 2)
    if sys.argv[1] == 'synth':
        return synth_checks(sys.argv[2], sys.argv[3], len(sys.argv) > 4 and sys.argv[4] == 'images')
    name, data_dir, split, dump = sys.argv[1:5]
    det = len(sys.argv) > 5 and sys.argv[5] == 'det'
    protocol = int(sys.argv[6]) if len(sys.argv) > 6 else 2
    ref = {'MuCo': lambda: muco(data_dir), 'MuPoTS': lambda: mupots(data_dir, det),
           'Human36M': lambda: human36m(data_dir, split, det, protocol)}[name]()
    got = list(csv.DictReader(open(dump)))
    if len(got) != len(ref):
        print('count mismatch: rootnet %d, reference %d' % (len(got), len(ref)))
        return 1
    for i, (g, r) in enumerate(zip(got, ref)):
        vals = [('path', g['path'] == r['path'], g['path'], r['path'])]
        pairs = list(zip(['bx', 'by', 'bw', 'bh'], r['bbox'])) + [('area', r['area']), ('k', r['k'])]
        pairs += list(zip(['rx', 'ry', 'rz'], r['root_img'])) + list(zip(['cx', 'cy', 'cz'], r['root_cam']))
        pairs += list(zip(['fx', 'fy'], r['f'])) + list(zip(['px', 'py'], r['c'])) + [('score', r['score'])]
        vals += [(k, close(g[k], v), g[k], v) for k, v in pairs]
        for k, ok, gv, rv in vals:
            if not ok:
                print('record %d field %s: rootnet %s, reference %s' % (i, k, gv, rv))
                return 1
    print('ok %d records' % len(ref))
    return 0


if __name__ == '__main__':
    sys.exit(main())
