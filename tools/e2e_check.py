#!/usr/bin/python3
"""Checks `rootnet test` output against tools/eval_ref.py run on the result
JSON it wrote (an independent computation of the published metrics).

usage: e2e_check.py KIND RESULT.json GT.json METRICS.json PRINTED.txt
  KIND: MuPoTS (GT boxes: AP_root at the run's threshold, 25 cm by default,
  and MRPE by record), Human36M or PW3D.
  METRICS.json: `rootnet test --metrics-json`; PRINTED.txt: its stdout.
Prints one "ok ..." or "FAIL ..." line per quantity; exits 1 on any FAIL.
"""
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import eval_ref  # noqa: E402


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def same_printed(a, b):
    """Printed with 4 decimals: equal to the reference rounded, up to that rounding."""
    return abs(a - b) <= 0.5e-4 + 1e-12 * abs(b)


def printed_values(text, thr):
    """AP and MRPE numbers from the human-readable lines."""
    out = {}
    m = re.search(r'AP_root@%scm: ([0-9.]+)\s+\(tp (\d+), fp (\d+)' % re.escape('%g' % (thr / 10)), text)
    if m:
        out['ap'], out['tp'], out['fp'] = float(m.group(1)), int(m.group(2)), int(m.group(3))
    m = re.search(r'MRPE \((?:mm|m), (\d+) records\): total ([0-9.]+)\s+x ([0-9.]+)\s+y ([0-9.]+)\s+z ([0-9.]+)', text)
    if m:
        out['n'] = int(m.group(1))
        out.update(zip(('total', 'x', 'y', 'z'), (float(v) for v in m.groups()[1:])))
    return out


def main(argv):
    if len(argv) != 6:
        sys.stderr.write(__doc__)
        return 2
    kind, result, gt, metrics, printed = argv[1:]
    c = json.load(open(metrics))
    thr = float(c['ap']['thr']) if 'ap' in c else 250.0
    shown = printed_values(open(printed).read(), thr)
    if kind == 'MuPoTS':
        ref = eval_ref.mupots_records(result, gt, [thr])
        ref_ap = ref['ap'][str(thr)]
    else:
        ref = eval_ref.evaluate(kind, result, gt, [250.0])
        ref_ap = None
    checks = []
    if ref_ap is not None:
        checks += [('AP_root@%gmm (JSON)' % thr, c['ap']['ap'], ref_ap['ap'], close),
                   ('AP tp', c['ap']['tp'], ref_ap['tp'], int.__eq__),
                   ('AP fp', c['ap']['fp'], ref_ap['fp'], int.__eq__),
                   ('AP_root@%gmm (printed)' % thr, shown.get('ap'), ref_ap['ap'], same_printed)]
    for axis in ('total', 'x', 'y', 'z'):
        checks.append(('MRPE %s (JSON)' % axis, c['mrpe'][axis], ref['mrpe'][axis], close))
        checks.append(('MRPE %s (printed)' % axis, shown.get(axis), ref['mrpe'][axis], same_printed))
    checks.append(('MRPE n', c['mrpe']['n'], ref['mrpe']['n'], int.__eq__))
    bad = 0
    for name, got, want, eq in checks:
        good = got is not None and eq(type(want)(got), want)
        bad += not good
        print('%s %s: rootnet %r, reference %r' % ('ok  ' if good else 'FAIL', name, got, want))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
