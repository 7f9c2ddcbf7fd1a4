"""Reference timing for bench_annot: Python json.load of a MuCo-3DHP annotation
file plus the authors' MuCo.load_data filter (closest person, 500 mm
separation, 1500-7500 mm depth, process_bbox), in numpy as they do it.
Run with Debian's /usr/bin/python3. Prints one line:
  json_load_s=... filter_s=... records=... peak_rss_mb=...
"""
import json
import math
import resource
import sys
import time

import numpy as np

INPUT_SHAPE = (256, 256)


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
    w, h = bbox[2], bbox[3]
    c_x, c_y = bbox[0] + w / 2., bbox[1] + h / 2.
    aspect_ratio = INPUT_SHAPE[1] / INPUT_SHAPE[0]
    if w > aspect_ratio * h:
        h = w / aspect_ratio
    elif w < aspect_ratio * h:
        w = h * aspect_ratio
    bbox[2], bbox[3] = w * 1.25, h * 1.25
    bbox[0], bbox[1] = c_x - bbox[2] / 2., c_y - bbox[3] / 2.
    return bbox


def muco_filter(db):
    root = 14
    anns_of = {}
    for a in db['annotations']:
        anns_of.setdefault(a['image_id'], []).append(a)
    data = []
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
            cam = np.array(anns[p]['keypoints_cam'])
            root_cam = cam[root]
            if root_cam[2] < 1500 or root_cam[2] > 7500:
                continue
            joint_img = np.concatenate([np.array(anns[p]['keypoints_img']), cam[:, 2:]], 1)
            bbox = process_bbox(anns[p]['bbox'], img['width'], img['height'])
            if bbox is None:
                continue
            data.append({'img_path': img['file_name'], 'bbox': bbox, 'area': bbox[2] * bbox[3],
                         'root_img': joint_img[root], 'root_cam': root_cam,
                         'root_vis': np.array(anns[p]['keypoints_vis'])[root, None], 'f': img['f'], 'c': img['c']})
    return data


def main():
    t0 = time.perf_counter()
    with open(sys.argv[1]) as f:
        db = json.load(f)
    t1 = time.perf_counter()
    data = muco_filter(db)
    t2 = time.perf_counter()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print('json_load_s=%.4f filter_s=%.4f records=%d peak_rss_mb=%.1f' % (t1 - t0, t2 - t1, len(data), rss))


if __name__ == '__main__':
    main()
