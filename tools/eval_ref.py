#!/usr/bin/python3
"""Reference RootNet evaluation, written from the published algorithm
(3DMPPE_ROOTNET_RELEASE MuPoTS_eval.calculate_score, Human36M.evaluate,
PW3D.evaluate), independent of the C code, for tests.

usage: eval_ref.py evaluate KIND RESULT.json GT.json [THR ...]
       eval_ref.py mupots-records RESULT.json MuPoTS-3D.json [THR ...]
           (GT-box results: AP, plus MRPE of the i-th prediction against the
            i-th valid annotation, checking that their image ids agree)
       eval_ref.py gen KIND SEED OUTDIR    (random result + GT files for tests)
Prints one JSON object with the metrics (full precision).
"""
import json
import math
import random
import sys

ACTIONS = ['Directions', 'Discussion', 'Eating', 'Greeting', 'Phoning', 'Posing', 'Purchases', 'Sitting',
           'SittingDown', 'Smoking', 'Photo', 'Waiting', 'Walking', 'WalkDog', 'WalkTogether']


def load_gt(path):
    """List of dicts (image_id, ann_id, root, valid, action), file order."""
    with open(path) as f:
        doc = json.load(f)
    out = []
    if isinstance(doc, dict):
        for a in doc['annotations']:
            out.append({'image_id': a['image_id'], 'ann_id': a.get('id', -1), 'root': a['keypoints_cam'][14],
                        'valid': a['is_valid'] != 0, 'action': -1})
    else:
        for a in doc:
            out.append({'image_id': a['image_id'], 'ann_id': a.get('ann_id', -1), 'root': a['root_cam'],
                        'valid': a.get('is_valid', 1) != 0, 'action': a.get('action', -1)})
    return out


def dist(a, b):
    return math.sqrt(sum((float(x) - float(y)) ** 2 for x, y in zip(a, b)))


def mupots_ap(preds, gts, thr):
    by_image = {}
    for g in gts:
        by_image.setdefault(g['image_id'], []).append(g)
    n_valid = sum(1 for g in gts if g['valid'])
    ranked = sorted(preds, key=lambda p: -p['score'])  # stable: ties keep file order
    taken = set()
    prec, rec = [], []
    tp = fp = skipped = 0
    for p in ranked:
        cands = [(k, g) for k, g in enumerate(by_image.get(p['image_id'], [])) if g['valid']]
        if not cands:
            skipped += 1
            continue
        best_k, best_d = None, 9999.0
        for k, g in cands:
            d = dist(p['root_cam'], g['root'])
            if d < best_d:
                best_k, best_d = k, d
        key = (p['image_id'], best_k)
        hit = best_k is not None and best_d < thr and key not in taken
        if hit:
            taken.add(key)
            tp += 1
        else:
            fp += 1
        prec.append(tp / (tp + fp))
        rec.append(tp / n_valid)
    ap = sum(prec[i] * (rec[i] - rec[i - 1]) for i in range(1, len(prec)))
    return {'ap': ap, 'tp': tp, 'fp': fp, 'skipped': skipped, 'n_gt': n_valid}


def mrpe(pairs):
    """pairs: (pred root, gt root); returns total, x, y, z means."""
    n = len(pairs)
    tot = sum(dist(p, g) for p, g in pairs) / n
    axes = [sum(abs(p[k] - g[k]) for p, g in pairs) / n for k in range(3)]
    return {'total': tot, 'x': axes[0], 'y': axes[1], 'z': axes[2], 'n': n}


def pair_up(preds, gts, key_pred, key_gt):
    first = {}
    for g in gts:
        first.setdefault(g[key_gt], g)
    return [(p, first[p[key_pred]]) for p in preds]


def evaluate(kind, result_path, gt_path, thrs):
    with open(result_path) as f:
        preds = json.load(f)
    gts = load_gt(gt_path)
    if kind == 'MuPoTS':
        return {'ap': {str(t): mupots_ap(preds, gts, t) for t in thrs}}
    if kind == 'PW3D':
        pairs = pair_up(preds, gts, 'ann_id', 'ann_id')
    else:
        pairs = pair_up(preds, gts, 'image_id', 'image_id')
    out = {'mrpe': mrpe([(p['root_cam'], g['root']) for p, g in pairs])}
    if kind == 'Human36M':
        per = {}
        for p, g in pairs:
            per.setdefault(g['action'], []).append(dist(p['root_cam'], g['root']))
        out['actions'] = {ACTIONS[a - 2]: {'mrpe': sum(v) / len(v), 'n': len(v)} for a, v in sorted(per.items())}
    return out


def mupots_records(result_path, gt_path, thrs):
    """GT-box MuPoTS results: one prediction per valid annotation, file order."""
    with open(result_path) as f:
        preds = json.load(f)
    gts = load_gt(gt_path)
    valid = [g for g in gts if g['valid']]
    if len(valid) != len(preds):
        raise SystemExit('%d predictions but %d valid annotations' % (len(preds), len(valid)))
    for i, (p, g) in enumerate(zip(preds, valid)):
        if p['image_id'] != g['image_id']:
            raise SystemExit('prediction %d: image_id %s, annotation has %s' % (i, p['image_id'], g['image_id']))
    out = {'ap': {str(t): mupots_ap(preds, gts, t) for t in thrs}}
    out['mrpe'] = mrpe([(p['root_cam'], g['root']) for p, g in zip(preds, valid)])
    return out


def gen_mupots(rng, n_img, n_pred):
    images, anns, preds = [], [], []
    aid = 0
    for i in range(n_img):
        images.append({'id': 100 + i})
        for _ in range(rng.randint(0, 4)):
            root = [rng.uniform(-2000, 2000), rng.uniform(-1000, 1000), rng.uniform(2000, 8000)]
            kp = [[rng.uniform(-1, 1) for _ in range(3)] for _ in range(17)]
            kp[14] = root
            anns.append({'id': aid, 'image_id': 100 + i, 'is_valid': int(rng.random() < 0.8), 'keypoints_cam': kp})
            aid += 1
    for _ in range(n_pred):
        img = 100 + rng.randint(-1, n_img)  # a few images with no GT at all
        own = [a for a in anns if a['image_id'] == img]
        if own and rng.random() < 0.8:
            base = rng.choice(own)['keypoints_cam'][14]
            s = rng.choice([30.0, 150.0, 400.0])
            root = [c + rng.gauss(0, s) for c in base]
        else:
            root = [rng.uniform(-2000, 2000), rng.uniform(-1000, 1000), rng.uniform(2000, 8000)]
        score = round(rng.random(), 1)  # coarse scores: many ties
        preds.append({'image_id': img, 'root_cam': root, 'bbox': [10.0, 20.0, 100.0, 100.0], 'score': score})
    return {'images': images, 'annotations': anns}, preds


def gen_mrpe(rng, n, kind):
    gts, preds = [], []
    for i in range(n):
        unit = 1.0 if kind == 'PW3D' else 1000.0
        root = [rng.uniform(-2, 2) * unit, rng.uniform(-1, 1) * unit, rng.uniform(2, 8) * unit]
        act = rng.randint(2, 16) if kind == 'Human36M' else -1
        gts.append({'image_id': 7 * i, 'ann_id': 1000 + i, 'root_cam': root, 'is_valid': 1, 'action': act})
        pred = [c + rng.gauss(0, 0.2 * unit) for c in root]
        rec = {'image_id': 7 * i, 'bbox': [1.0, 2.0, 50.0, 60.0], 'root_cam': pred}
        if kind == 'PW3D':
            rec['ann_id'] = 1000 + i
        preds.append(rec)
    rng.shuffle(preds)  # pairing must go by id, not by position
    return gts, preds


def gen(kind, seed, outdir):
    rng = random.Random(seed)
    if kind == 'MuPoTS':
        gt, preds = gen_mupots(rng, 40, 400)
    else:
        gt, preds = gen_mrpe(rng, 300, kind)
    with open(outdir + '/gt.json', 'w') as f:
        json.dump(gt, f)
    with open(outdir + '/result.json', 'w') as f:
        json.dump(preds, f)


def main(argv):
    if len(argv) >= 5 and argv[1] == 'evaluate':
        thrs = [float(t) for t in argv[5:]] or [250.0]
        json.dump(evaluate(argv[2], argv[3], argv[4], thrs), sys.stdout)
        print()
    elif len(argv) >= 4 and argv[1] == 'mupots-records':
        thrs = [float(t) for t in argv[4:]] or [250.0]
        json.dump(mupots_records(argv[2], argv[3], thrs), sys.stdout)
        print()
    elif len(argv) == 5 and argv[1] == 'gen':
        gen(argv[2], int(argv[3]), argv[4])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
