"""PoseNet's metrics computed as the authors' code computes them, beside rootnet's (src/eval/pose_metrics.c).

Written from mks0601/3DMPPE_POSENET_RELEASE (data/Human36M/Human36M.py evaluate, common/utils/pose_utils.py
rigid_align, data/MuPoTS/MuPoTS.py evaluate) and the MuPoTS-3D evaluation in MATLAB
(mpii_mupots_multiperson_eval.m and its util functions: mpii_multiperson_get_identity_matching,
mpii_map_to_gt_bone_lengths, mpii_get_joints('relevant'), mpii_evaluate_multiperson_errors,
mpii_compute_3d_pck, mpii_get_pck_auc_joint_groups), kept in their shape (cells as lists, 1-based
indices where MATLAB has them), not from rootnet's C.

    pose_metrics_ref.py BIN DIR [--plant nofix]

generates synthetic Human3.6M people (network outputs, boxes, roots, cameras; some predictions mirror
images, so that PA-MPJPE needs the reflection fix) and MuPoTS-3D images (20 sequences, invalid and
undetected people, false positives, joints at (0, 0), predictions 40 px off), runs `BIN h36m DIR` and
`BIN mupots DIR` (tests/test_pose_metrics.c), compares every number (overall, per action, per sequence)
within 1e-6 relative, and reads the .mat files back with scipy.io.loadmat: names, shapes, values, and the
MATLAB evaluation run on them. --plant nofix drops the reference's reflection fix (its PA-MPJPE checks
must then fail).
Prints one line per check; exits 0, 1 on a failed check, 77 (skipped) when the build has no libmatio.
Imported (tests/pose_test_mupots_ref.py), it lends its port of the MATLAB evaluation (mupots_eval).
"""
import os
import subprocess
import sys

import numpy as np
import scipy.io as sio

BIN = DIR = None
PLANT = ''
rng = np.random.default_rng(20261207)
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print('FAIL: ' + what)


worst = [0.0]


def close(a, b, rel=1e-6):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    same_nan = np.isnan(a) == np.isnan(b)
    fin = np.isfinite(a) & np.isfinite(b)
    if fin.any():
        worst[0] = max(worst[0], float((np.abs(a - b)[fin] / np.maximum(np.abs(b[fin]), 1e-300)).max()))
    ok = np.isclose(a, b, rtol=rel, atol=1e-9, equal_nan=True)
    return bool(same_nan.all() and ok.all())


# ---- Human3.6M, as Human36M.py ---------------------------------------------------------------------------
output_shape = (64, 64)
depth_dim = 64
bbox_3d_shape = (2000, 2000, 2000)
joint_num = 18
root_idx = 0
eval_joint = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)  # exclude thorax
action_name = ['Directions', 'Discussion', 'Eating', 'Greeting', 'Phoning', 'Posing', 'Purchases', 'Sitting',
               'SittingDown', 'Smoking', 'Photo', 'Waiting', 'Walking', 'WalkDog', 'WalkTogether']


def pixel2cam(pixel_coord, f, c):
    x = (pixel_coord[:, 0] - c[0]) / f[0] * pixel_coord[:, 2]
    y = (pixel_coord[:, 1] - c[1]) / f[1] * pixel_coord[:, 2]
    z = pixel_coord[:, 2]
    return np.concatenate((x[:, None], y[:, None], z[:, None]), 1)


def rigid_transform_3D(A, B):
    centroid_A = np.mean(A, axis=0)
    centroid_B = np.mean(B, axis=0)
    H = np.dot(np.transpose(A - centroid_A), B - centroid_B)
    U, s, V = np.linalg.svd(H)
    R = np.dot(np.transpose(V), np.transpose(U))
    if np.linalg.det(R) < 0 and PLANT != 'nofix':
        V[2] = -V[2]
        R = np.dot(np.transpose(V), np.transpose(U))
    t = -np.dot(R, np.transpose(centroid_A)) + np.transpose(centroid_B)
    return R, t


def rigid_align(A, B):
    R, t = rigid_transform_3D(A, B)
    return np.transpose(np.dot(R, np.transpose(A))) + t


def similarity_align(A, B):
    """Umeyama (1991): rotation with the same reflection fix, then the scale that fits best."""
    cA, cB = A.mean(0), B.mean(0)
    H = (A - cA).T @ (B - cB)
    U, s, Vt = np.linalg.svd(H)
    d = np.sign(np.linalg.det(Vt.T @ U.T))
    D = np.diag([1.0, 1.0, d])
    R = Vt.T @ D @ U.T
    scale = np.trace(np.diag(s) @ D) / ((A - cA) ** 2).sum()
    return scale * (A - cA) @ R.T + cB


def h36m_evaluate(preds, gts, protocol, align=None):
    """Their evaluate(): preds (n, 18, 3) network outputs; gts dicts with bbox, root_cam, joint_cam, f, c, action."""
    sample_num = len(gts)
    error = np.zeros((sample_num, joint_num - 1))
    error_action = [[] for _ in range(len(action_name))]
    cams = []
    for n in range(sample_num):
        gt = gts[n]
        f, c, bbox, gt_3d_root, gt_3d_kpt = gt['f'], gt['c'], gt['bbox'], gt['root_cam'], gt['joint_cam']
        pred_2d_kpt = preds[n].copy()
        pred_2d_kpt[:, 0] = pred_2d_kpt[:, 0] / output_shape[1] * bbox[2] + bbox[0]
        pred_2d_kpt[:, 1] = pred_2d_kpt[:, 1] / output_shape[0] * bbox[3] + bbox[1]
        pred_2d_kpt[:, 2] = (pred_2d_kpt[:, 2] / depth_dim * 2 - 1) * (bbox_3d_shape[0] / 2) + gt_3d_root[2]
        pred_3d_kpt = pixel2cam(pred_2d_kpt, f, c)
        cams.append(pred_3d_kpt.copy())
        pred_3d_kpt = pred_3d_kpt - pred_3d_kpt[root_idx]
        gt_3d_kpt = gt_3d_kpt - gt_3d_kpt[root_idx]
        if protocol == 1:
            pred_3d_kpt = (align or rigid_align)(pred_3d_kpt, gt_3d_kpt)
        pred_3d_kpt = np.take(pred_3d_kpt, eval_joint, axis=0)
        gt_3d_kpt = np.take(gt_3d_kpt, eval_joint, axis=0)
        error[n] = np.sqrt(np.sum((pred_3d_kpt - gt_3d_kpt) ** 2, 1))
        img_name = gt['img_path']
        action_idx = int(img_name[img_name.find('act') + 4:img_name.find('act') + 6]) - 2
        error_action[action_idx].append(error[n].copy())
    tot_err = np.mean(error)
    with np.errstate(invalid='ignore', divide='ignore'):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', RuntimeWarning)
            per_action = [np.mean(np.array(error_action[i])) for i in range(len(error_action))]
    return tot_err, per_action, np.array(cams)


def h36m_skeleton(n):
    """n random people: 17 joints around a pelvis at 3-6 m, and the Thorax added as theirs (shoulders' mean)."""
    base = np.array([[0, 0, 0], [-130, 0, 0], [-130, 440, 0], [-130, 880, 0], [130, 0, 0], [130, 440, 0],
                     [130, 880, 0], [0, -230, 0], [0, -480, 0], [0, -560, -60], [0, -650, 0], [170, -450, 0],
                     [170, -200, 0], [170, 40, 0], [-170, -450, 0], [-170, -200, 0], [-170, 40, 0]], float)
    people = []
    for _ in range(n):
        j = base + rng.normal(0, 25, base.shape)
        th = rng.uniform(-np.pi, np.pi)
        R = np.array([[np.cos(th), 0, np.sin(th)], [0, 1, 0], [-np.sin(th), 0, np.cos(th)]])
        j = j @ R.T + np.array([rng.uniform(-800, 800), rng.uniform(-300, 300), rng.uniform(3000, 6000)])
        thorax = (j[11] + j[14]) * 0.5
        people.append(np.concatenate([j, thorax[None]], 0))
    return np.array(people)


def h36m_case():
    n = 240
    gt_cam = h36m_skeleton(n)
    actions = rng.integers(2, 17, n)
    actions[actions == 9] = 10  # action 9 (Sitting) left out: NaN for it, as numpy's mean of an empty list
    gts, outs, cin = [], [], []
    mirrored = 0
    for i in range(n):
        g = gt_cam[i]
        f = np.array([rng.uniform(1100, 1200), rng.uniform(1100, 1200)])
        c = np.array([rng.uniform(500, 520), rng.uniform(490, 510)])
        root_cam = g[root_idx] + (rng.normal(0, 80, 3) if i % 3 else 0)  # RootNet's root, or the GT one
        bbox = np.array([rng.uniform(100, 300), rng.uniform(50, 150), rng.uniform(300, 500), 0.0])
        bbox[3] = bbox[2]
        # a prediction: the ground truth (less root) turned, some mirrored left-right, noised, at its root
        rel = g - g[root_idx]
        th = rng.normal(0, 0.3)
        R = np.array([[np.cos(th), -np.sin(th), 0], [np.sin(th), np.cos(th), 0], [0, 0, 1]])
        if i % 4 == 1:
            rel = rel * np.array([-1, 1, 1])
            mirrored += 1
        p = rel @ R.T * rng.uniform(0.9, 1.1) + rng.normal(0, 30, rel.shape) + g[root_idx] + rng.normal(0, 50, 3)
        # back to the network's output grid, through their forward formulas inverted
        img = np.stack([p[:, 0] / p[:, 2] * f[0] + c[0], p[:, 1] / p[:, 2] * f[1] + c[1], p[:, 2]], 1)
        out = np.stack([(img[:, 0] - bbox[0]) / bbox[2] * output_shape[1],
                        (img[:, 1] - bbox[1]) / bbox[3] * output_shape[0],
                        ((img[:, 2] - root_cam[2]) / (bbox_3d_shape[0] / 2) + 1) * depth_dim / 2], 1)
        outs.append(out)
        cin.append(np.concatenate([bbox, [root_cam[2]], f, c]))
        gts.append({'img_path': 's_%02d_act_%02d_subact_01_ca_01/x.jpg' % (9 if i % 2 else 11, actions[i]),
                    'bbox': bbox, 'root_cam': root_cam, 'joint_cam': g, 'f': f, 'c': c})
    assert mirrored > 20
    return np.array(outs), np.array(cin), gts, actions


def run_h36m():
    outs, cin, gts, actions = h36m_case()
    np.save(DIR + '/h36m_out.npy', outs)
    np.save(DIR + '/h36m_cam_in.npy', cin)
    np.save(DIR + '/h36m_gt.npy', np.array([g['joint_cam'] for g in gts]))
    np.save(DIR + '/h36m_action.npy', actions.astype(np.int32))
    rc = subprocess.run([BIN, 'h36m', DIR]).returncode
    check(rc == 0, 'test_pose_metrics h36m: exit %d' % rc)
    if rc:
        return
    c_cam = np.load(DIR + '/c_h36m_cam.npy')
    c_met = np.load(DIR + '/c_h36m_metrics.npy')
    p2, a2, cams = h36m_evaluate(outs, gts, 2)
    check(close(c_cam, cams, 1e-12), 'output grid -> camera mm: as their evaluate() (worst %.3g mm)'
          % np.abs(c_cam - cams).max())
    p1, a1, _ = h36m_evaluate(outs, gts, 1)
    ps, as_, _ = h36m_evaluate(outs, gts, 1, similarity_align)
    for name, row, tot, act in (('MPJPE (protocol 2)', 0, p2, a2), ('PA-MPJPE (protocol 1, rigid_align)', 1, p1, a1),
                                ('PA-MPJPE with scale (Umeyama)', 2, ps, as_)):
        check(close(c_met[row, 0], tot), '%s: rootnet %.9f, reference %.9f' % (name, c_met[row, 0], tot))
        check(close(c_met[row, 1:], act), '%s per action: rootnet %s, reference %s'
              % (name, np.round(c_met[row, 1:], 6), np.round(act, 6)))
        print('%s: %.4f mm (%s)' % (name, tot, ', '.join('%s %.2f' % (n, e) for n, e in zip(action_name, act))))
    check(np.isnan(c_met[0, 1 + 9 - 2]) and np.isnan(a2[9 - 2]), 'an action without people: NaN (numpy mean of [])')
    # the data needs the fix: without it protocol 1 differs
    saved = globals()['PLANT']
    globals()['PLANT'] = 'nofix'
    pn, _, _ = h36m_evaluate(outs, gts, 1)
    globals()['PLANT'] = saved
    check(abs(pn - p1) > 1e-3 * p1, 'the reflection fix matters here: %.4f with, %.4f without' % (p1, pn))


# ---- MuPoTS-3D, as mpii_mupots_multiperson_eval.m ------------------------------------------------------------
# mpii_get_joints('relevant'): the parents o1 (1-based)
o1 = [2, 16, 2, 3, 4, 2, 6, 7, 15, 9, 10, 15, 12, 13, 15, 15, 2]
safe_traversal_order = [15, 16, 2, 1, 17, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]
# mpii_get_pck_auc_joint_groups (MuPoTS-3D's util): 14 joints
joint_groups = [('Head', [1]), ('Neck', [2]), ('Shou', [3, 6]), ('Elbow', [4, 7]), ('Wrist', [5, 8]),
                ('Hip', [9, 12]), ('Knee', [10, 13]), ('Ankle', [11, 14])]
num_joints = 17


def get_identity_matching(pose_2d, visibility, old_pose_2d, old_visibility, matching_threshold):
    matching = np.zeros(len(visibility), dtype=int)
    matched = np.zeros(len(old_visibility), dtype=int)
    for i in range(len(visibility)):
        matching_score = np.zeros(len(old_visibility))
        for j in range(len(old_visibility)):
            if matched[j] > 0:
                continue
            diff = np.abs(pose_2d[i] - old_pose_2d[j])
            matches = (diff[0, :] < matching_threshold) & (diff[1, :] < matching_threshold)
            matching_score[j] = np.sum(matches[(visibility[i] != 0) & (old_visibility[j] != 0)])
        if len(old_visibility) == 0:
            continue
        value = int(np.argmax(matching_score))  # MATLAB's max: the first largest
        if matching_score[value] > 0:
            matching[i] = value + 1
            matched[value] = 1
    return matching


def map_to_gt_bone_lengths(pred, gt, o1, traversal_order):
    mapped_pose = pred.copy()
    for idx in traversal_order:
        i, p = idx - 1, o1[idx - 1] - 1
        gt_bone_length = np.linalg.norm(gt[:, i] - gt[:, p])
        pred_bone_vector = pred[:, i] - pred[:, p]
        with np.errstate(invalid='ignore', divide='ignore'):
            pred_bone_vector = pred_bone_vector * gt_bone_length / np.linalg.norm(pred_bone_vector)
        mapped_pose[:, i] = mapped_pose[:, p] + pred_bone_vector
    return mapped_pose


def compute_3d_pck(error_data):
    """mpii_compute_3d_pck: per entry (sequence) the Total PCK and AUC over the joint groups."""
    thresh = np.arange(0, 151, 5)
    pck_thresh = 150
    out = []
    for err in error_data:  # err: (17, 1, nf)
        nf = err.shape[2]
        joint_count = 0
        total_curve = None
        total_pck = None
        for name, js in joint_groups:
            sel = err[np.array(js) - 1, 0, :]
            with np.errstate(invalid='ignore', divide='ignore'):
                curve = np.array([np.sum(sel < t) / (len(js) * nf) for t in thresh])
                pck = 100 * np.sum(sel < pck_thresh) / (len(js) * nf)
            joint_count += len(js)
            total_curve = curve * len(js) if total_curve is None else total_curve + curve * len(js)
            total_pck = pck * len(js) if total_pck is None else total_pck + pck * len(js)
        total_pck = total_pck / joint_count
        total_curve = total_curve / joint_count
        out.append((total_pck, 100 * np.sum(total_curve) / len(thresh)))
    return out


def mupots_eval(annotations, preds_2d_kpt, preds_3d_kpt, eval_mode, is_relative, errors=None):
    """The script's loops. annotations[ts] = list of frames, each a list of dicts (annot2 (2, 17),
    univ_annot3 (3, 17), isValidFrame) in annotation order; preds: loadmat dicts. errors (a list): gets
    sequencewise_per_joint_error, each sequence's (17, 1, people) joint errors."""
    seq_err, undetected_seq, annotated_seq = [], [], []
    for ts in range(1, 21):
        frames = annotations[ts]
        undetected_people = annotated_people = 0
        per_joint_error = []
        for i in range(1, len(frames) + 1):
            anns = frames[i - 1]
            valid = [a for a in anns if a['isValidFrame']]
            annotated_people += len(valid)
            if len(valid) == 0:
                continue
            matching_joints = list(range(2, 15))
            mj = np.array(matching_joints) - 1
            gt_pose_2d = [a['annot2'][:, mj] for a in valid]
            gt_pose_3d = [a['univ_annot3'] for a in valid]
            gt_visibility = [np.ones(len(matching_joints)) for _ in valid]
            key = 'TS%d_img_%06d' % (ts, i - 1)
            if key in preds_2d_kpt:  # (the script has every image's key; a missing one: nobody detected)
                pred_2d_kpt, pred_3d_kpt = preds_2d_kpt[key], preds_3d_kpt[key]
                num_pred = pred_2d_kpt.shape[0]
            else:
                num_pred = 0
            pred_pose_2d, pred_pose_3d, pred_visibility = [], [], []
            for k in range(num_pred):
                p2 = np.squeeze(pred_2d_kpt[k, :, :]).T[:, mj]
                pred_pose_2d.append(p2)
                pred_visibility.append(~((p2[0, :] == 0) & (p2[1, :] == 0)))
                p3 = np.squeeze(pred_3d_kpt[k, :, :]).T
                if is_relative == 1:
                    p3 = p3 - np.tile(p3[:, 14:15], (1, 17))
                pred_pose_3d.append(p3)
            matching = get_identity_matching(gt_pose_2d, gt_visibility, pred_pose_2d, pred_visibility, 40)
            undetected_people += int(np.sum(matching == 0))
            for k in range(len(valid)):
                if is_relative == 1:
                    P = gt_pose_3d[k][:, :num_joints] - np.tile(gt_pose_3d[k][:, 14:15], (1, num_joints))
                else:
                    P = gt_pose_3d[k][:, :num_joints]
                pred_considered = 0
                if matching[k] != 0:
                    pred_p = pred_pose_3d[matching[k] - 1][:, :num_joints]
                    pred_p = map_to_gt_bone_lengths(pred_p, P, o1, safe_traversal_order[1:])
                    pred_considered = 1
                else:
                    pred_p = 100000 * np.ones(P.shape)
                    if eval_mode == 0:
                        pred_considered = 1
                if pred_considered == 1:
                    per_joint_error.append(np.sqrt(np.sum((pred_p - P) ** 2, 0)))
        err = np.array(per_joint_error).T[:, None, :] if per_joint_error else np.zeros((17, 1, 0))
        seq_err.append(err)
        if errors is not None:
            errors.append(err)
        undetected_seq.append(undetected_people)
        annotated_seq.append(annotated_people)
    return compute_3d_pck(seq_err), annotated_seq, undetected_seq, [e.shape[2] for e in seq_err]


def mupots_pose(n_people, center_x, depth):
    """MuPoTS-order skeletons (17 joints; Pelvis 14), 3D in mm and 2D in pixels (f 1400, c 1000)."""
    base = np.array([[0, -800, 0], [0, -550, 0], [-180, -520, 0], [-200, -270, 0], [-210, -20, 0],
                     [180, -520, 0], [200, -270, 0], [210, -20, 0], [-120, 0, 0], [-130, 420, 0],
                     [-130, 850, 0], [120, 0, 0], [130, 420, 0], [130, 850, 0], [0, 0, 0], [0, -270, 0],
                     [0, -680, 30]], float)
    g3 = base[None] + rng.normal(0, 20, (n_people, 17, 3))
    g3 += np.stack([center_x, rng.uniform(-200, 200, n_people), depth], 1)[:, None, :]
    g2 = np.stack([g3[..., 0] / g3[..., 2] * 1400 + 1000, g3[..., 1] / g3[..., 2] * 1400 + 1000], -1)
    return g2, g3


def mupots_case():
    """Ground truth (annotations per sequence and frame) and predictions (seq, frame, 2D, 3D)."""
    annotations, gt_rows, pr_rows = {}, [], []
    for ts in range(1, 21):
        nfr = int(rng.integers(2, 6))
        annotations[ts] = []
        for fr in range(nfr):
            npeople = int(rng.integers(0 if fr == 1 else 1, 5))
            g2, g3 = mupots_pose(npeople, rng.uniform(-2000, 2000, npeople), rng.uniform(3000, 7000, npeople))
            if ts == 4 and fr == 0 and npeople >= 2:  # two people close in 2D: the greedy order decides
                g2[1], g3[1] = g2[0] + rng.normal(0, 15, g2[0].shape), g3[0] + rng.normal(0, 40, g3[0].shape)
            anns, preds = [], []
            for k in range(npeople):
                valid = not (rng.random() < 0.12)
                anns.append({'annot2': g2[k].T.copy(), 'univ_annot3': g3[k].T.copy(), 'isValidFrame': valid})
                gt_rows.append((ts, fr, g2[k], g3[k], valid))
                r = rng.random()
                if r < 0.2:
                    continue  # undetected
                p2 = g2[k] + rng.normal(0, 12, g2[k].shape)
                if r < 0.3:
                    p2 = g2[k] + 40 + rng.uniform(0, 5, g2[k].shape)  # 40 px or more off: no match
                if r > 0.9:
                    p2[rng.choice(17, 5, replace=False)] = 0  # joints not found: (0, 0)
                root_err = rng.normal(0, 40, 3)
                p3 = (g3[k] - g3[k][14]) * rng.uniform(0.9, 1.1) + g3[k][14] + rng.normal(0, 45, g3[k].shape) + root_err
                preds.append((p2, p3))
            for _ in range(int(rng.integers(0, 2))):  # false positives
                q2, q3 = mupots_pose(1, rng.uniform(-3000, 3000, 1), rng.uniform(3000, 7000, 1))
                preds.append((q2[0] + 600, q3[0]))
            if ts == 7 and fr == 0:
                preds = []  # an image where nobody was detected: no key in the .mat
            order = rng.permutation(len(preds))
            for o in order:
                pr_rows.append((ts, fr) + preds[o])
            annotations[ts].append(anns)
    return annotations, gt_rows, pr_rows


def save_side(who, rows, with_valid):
    np.save('%s/mu_%s_seq.npy' % (DIR, who), np.array([r[0] for r in rows], np.int32))
    np.save('%s/mu_%s_frame.npy' % (DIR, who), np.array([r[1] for r in rows], np.int32))
    np.save('%s/mu_%s_2d.npy' % (DIR, who), np.array([r[2] for r in rows], np.float64).reshape(-1, 17, 2))
    np.save('%s/mu_%s_3d.npy' % (DIR, who), np.array([r[3] for r in rows], np.float64).reshape(-1, 17, 3))
    np.save('%s/mu_%s_valid.npy' % (DIR, who), np.array([r[4] if with_valid else 1 for r in rows], np.uint8))


def their_mat_dicts(pr_rows):
    """What MuPoTS.py's evaluate() hands to scipy.io.savemat: image name -> list of (17, 2) / (17, 3)."""
    d2, d3 = {}, {}
    for ts, fr, p2, p3 in pr_rows:
        name = 'TS%d_img_%06d' % (ts, fr)
        d2.setdefault(name, []).append(p2)
        d3.setdefault(name, []).append(p3)
    return d2, d3


def check_mat(pr_rows):
    """The .mat files rootnet wrote against scipy's of the same dict: names, shapes, classes, values, order."""
    d2, d3 = their_mat_dicts(pr_rows)
    sio.savemat(DIR + '/theirs_2d.mat', d2)
    sio.savemat(DIR + '/theirs_3d.mat', d3)
    out = []
    for dim, ours, theirs, d in ((2, 'preds_2d_kpt_mupots.mat', 'theirs_2d.mat', d2),
                                 (3, 'preds_3d_kpt_mupots.mat', 'theirs_3d.mat', d3)):
        with open(DIR + '/' + ours, 'rb') as f:
            head = f.read(128)
        check(head[124:126] == b'\x00\x01' and head[126:128] == b'IM', '%s: a MAT 5 file, little-endian' % ours)
        a = sio.loadmat(DIR + '/' + ours)
        b = sio.loadmat(DIR + '/' + theirs)
        names = lambda m: sorted(k for k in m if not k.startswith('__'))
        check(names(a) == names(b) == sorted(d), '%s: one variable per image (%d), named as theirs' % (ours, len(d)))
        ok = all(a[k].dtype == np.float64 and a[k].shape == (len(d[k]), 17, dim) and np.array_equal(a[k], b[k])
                 for k in names(b))
        check(ok, '%s: each (people, 17, %d) float64, values and order equal to scipy.io.savemat\'s' % (ours, dim))
        info = {n: (s, c) for n, s, c in sio.whosmat(DIR + '/' + ours)}
        check(all(info[k] == ((len(d[k]), 17, dim), 'double') for k in d), '%s: whosmat: double (m, 17, %d)' % (ours, dim))
        out.append(a)
    return out


def run_mupots():
    annotations, gt_rows, pr_rows = mupots_case()
    save_side('gt', gt_rows, True)
    save_side('pr', [r + (1,) for r in pr_rows], False)
    res = subprocess.run([BIN, 'mupots', DIR], capture_output=True, text=True)
    sys.stdout.write(res.stdout)
    sys.stderr.write(res.stderr)
    check(res.returncode == 0, 'test_pose_metrics mupots: exit %d' % res.returncode)
    if res.returncode:
        return False
    have_mat = os.path.exists(DIR + '/preds_3d_kpt_mupots.mat')
    if have_mat:
        m2, m3 = check_mat(pr_rows)
    else:
        m2, m3 = (lambda d: ({k: np.array(v) for k, v in d[0].items()}, {k: np.array(v) for k, v in d[1].items()}))(
            their_mat_dicts(pr_rows))
    c_seq = np.load(DIR + '/c_mupots.npy')
    c_all = np.load(DIR + '/c_mupots_overall.npy')
    modes = [(1, 0, '3DPCK (relative), all annotated'), (1, 1, '3DPCK (relative), matched only'),
             (0, 0, 'PCK_abs, all annotated'), (0, 1, 'PCK_abs, matched only')]
    for m, (rel, mode, name) in enumerate(modes):
        pck_auc, annotated, undetected, scored = mupots_eval(annotations, m2, m3, mode, rel)
        pck = np.array([p for p, _ in pck_auc])
        auc = np.array([a for _, a in pck_auc])
        check(close(c_seq[m, :, 0], pck), '%s: per-sequence PCK\n rootnet   %s\n reference %s'
              % (name, np.round(c_seq[m, :, 0], 4), np.round(pck, 4)))
        check(close(c_seq[m, :, 1], auc), '%s: per-sequence AUC\n rootnet   %s\n reference %s'
              % (name, np.round(c_seq[m, :, 1], 4), np.round(auc, 4)))
        check(np.array_equal(c_seq[m, :, 2:5], np.array([annotated, undetected, scored]).T),
              '%s: annotated, undetected, scored per sequence' % name)
        tot_pck, tot_auc = np.nanmean(pck), np.nanmean(auc)
        check(close(c_all[m], [tot_pck, tot_auc]), '%s: over sequences %s, reference %.6f %.6f'
              % (name, c_all[m], tot_pck, tot_auc))
        print('%s: PCK %.3f, AUC %.3f (sequences: %s); undetected %d of %d'
              % (name, tot_pck, tot_auc, ' '.join('%.1f' % p for p in pck), sum(undetected), sum(annotated)))
        low = np.nanmin(pck) if rel else tot_pck
        check(sum(undetected) > 5 and 0 < low and np.nanmax(pck) < 100,
              '%s: the case is not trivial: undetected people, PCK strictly between 0 and 100' % name)
    return have_mat


def main():
    global BIN, DIR, PLANT
    BIN, DIR = sys.argv[1], sys.argv[2]
    PLANT = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == '--plant' else ''
    os.makedirs(DIR, exist_ok=True)
    run_h36m()
    have_mat = run_mupots()
    print('worst relative difference of a compared number: %.3g' % worst[0])
    print('%d passed, %d failed' % (passed, failed))
    if failed:
        sys.exit(1)
    if not have_mat:
        print('skipped: the .mat checks (this rootnet was built without libmatio)')
        sys.exit(77)


if __name__ == '__main__':
    main()
