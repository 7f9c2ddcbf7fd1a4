#!/usr/bin/env bash
# `rootnet evaluate` against tools/eval_ref.py (independent Python reference)
# on random result/GT files (MuPoTS AP_root at several thresholds, Human3.6M
# and 3DPW MRPE): equal to 1e-9 relative. Also the hand-worked AP case through
# both, and bad input (clear one-line errors, non-zero exit).
set -u
cd "$(dirname "$0")/.."
PY=${PY:-/usr/bin/python3}
RN_BIN=${RN_BIN:-$PWD/build/rootnet}
REF=tools/eval_ref.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
check() { # check NAME CONDITION-STATUS
    if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi
}

# Compares two JSON metric objects: same keys (threshold keys as numbers), numbers to 1e-9 relative.
same_json() {
    "$PY" - "$1" "$2" <<'EOF'
import json, math, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def norm_key(k):
    try:
        return repr(float(k))
    except ValueError:
        return k
def same(x, y, path):
    if isinstance(x, dict) and isinstance(y, dict):
        xk = {norm_key(k): v for k, v in x.items()}
        yk = {norm_key(k): v for k, v in y.items()}
        if set(xk) != set(yk):
            sys.exit('%s: keys %s vs %s' % (path, sorted(xk), sorted(yk)))
        for k in xk:
            same(xk[k], yk[k], path + '/' + k)
    elif isinstance(x, (int, float)) and isinstance(y, (int, float)):
        if not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12):
            sys.exit('%s: %r vs %r' % (path, x, y))
    else:
        sys.exit('%s: %r vs %r' % (path, x, y))
same(a, b, '')
EOF
}

# Random cases: the C program and the reference on the same files.
for kind in MuPoTS Human36M PW3D; do
    for seed in 1 2 3; do
        d="$tmp/$kind-$seed"
        mkdir -p "$d"
        "$PY" "$REF" gen "$kind" "$seed" "$d"
        thr=()
        [ "$kind" = MuPoTS ] && thr=(--ap-thr 250 --ap-thr 100 --ap-thr 500)
        "$RN_BIN" evaluate --dataset "$kind" --result "$d/result.json" --gt "$d/gt.json" "${thr[@]}" --json \
            > "$d/c.json" 2> "$d/c.err"
        rc=$?; check "$kind seed $seed: rootnet evaluate ran (rc $rc: $(cat "$d/c.err"))" $rc
        "$PY" "$REF" evaluate "$kind" "$d/result.json" "$d/gt.json" 250 100 500 > "$d/py.json"
        [ "$kind" != MuPoTS ] && "$PY" "$REF" evaluate "$kind" "$d/result.json" "$d/gt.json" > "$d/py.json"
        msg=$(same_json "$d/c.json" "$d/py.json" 2>&1)
        check "$kind seed $seed: C equals Python reference: $msg" $?
    done
done

# The hand-worked case of tests/test_eval.c (AP 0.275 at 250 mm, 17/48 at 350 mm) through both programs.
d="$tmp/hand"
mkdir -p "$d"
"$PY" - "$d" <<'EOF'
import json, sys
d = sys.argv[1]
def kp(root):
    k = [[0.0, 0.0, 0.0] for _ in range(17)]
    k[14] = root
    return k
gts = [(1, [0, 0, 3000], 1), (1, [1000, 0, 3000], 1), (1, [0, 0, 3100], 0), (2, [0, 0, 5000], 1),
       (3, [0, 0, 4000], 0), (4, [500, 500, 4000], 1)]
anns = [{'id': i, 'image_id': g[0], 'keypoints_cam': kp(g[1]), 'is_valid': g[2]} for i, g in enumerate(gts)]
json.dump({'images': [{'id': i} for i in (1, 2, 3, 4)], 'annotations': anns}, open(d + '/gt.json', 'w'))
preds = [(1, [0, 0, 3090], 0.9), (1, [0, 0, 3050], 0.8), (2, [0, 0, 5300], 0.6), (3, [0, 0, 4000], 0.7),
         (1, [1000, 100, 3000], 0.6), (2, [0, 0, 5100], 0.6), (9, [0, 0, 3000], 0.95)]
out = [{'image_id': p[0], 'root_cam': p[1], 'bbox': [1, 2, 3, 4], 'score': p[2]} for p in preds]
json.dump(out, open(d + '/result.json', 'w'))
EOF
"$RN_BIN" evaluate --dataset MuPoTS --result "$d/result.json" --gt "$d/gt.json" --ap-thr 250 --ap-thr 350 --json > "$d/c.json"
check "hand case: rootnet evaluate ran" $?
"$PY" "$REF" evaluate MuPoTS "$d/result.json" "$d/gt.json" 250 350 > "$d/py.json"
"$PY" -c 'import json, sys; d = json.load(open(sys.argv[1]))["ap"]; assert abs(d["250.0"]["ap"] - 0.275) < 1e-12 and abs(d["350.0"]["ap"] - 17/48) < 1e-12, d' "$d/py.json"
check "hand case: Python reference gives 0.275 and 17/48" $?
msg=$(same_json "$d/c.json" "$d/py.json" 2>&1)
check "hand case: C equals Python reference: $msg" $?
"$RN_BIN" evaluate --dataset MuPoTS --result "$d/result.json" --gt "$d/gt.json" > "$d/c.txt" &&
    grep -q '^AP_root@25cm: 0.2750 ' "$d/c.txt"
check "hand case: human-readable AP line, as test prints it (@25cm)" $?

# Bad input: exit status 1 (2 for usage errors) and one line naming file, record and field.
expect_error() { # expect_error NAME STATUS NEEDLE... -- ARGS...
    local name=$1 want=$2
    shift 2
    local needles=()
    while [ "$1" != -- ]; do needles+=("$1"); shift; done
    shift
    "$RN_BIN" evaluate "$@" > "$tmp/out" 2> "$tmp/err"
    local rc=$? ok=0
    [ "$rc" -eq "$want" ] || ok=1
    for n in "${needles[@]}"; do grep -qF -- "$n" "$tmp/err" || ok=1; done
    [ "$(grep -c . "$tmp/err")" -ge 1 ] || ok=1
    check "$name (rc $rc, stderr: $(head -c 300 "$tmp/err"))" $ok
}
printf '[{"image_id": 1, "bbox": [1, 2, 3, 4], "score": 1}]' > "$tmp/nofield.json"
expect_error "missing root_cam" 1 "$tmp/nofield.json" "record 0" "'root_cam'" missing -- \
    --dataset MuPoTS --result "$tmp/nofield.json" --gt "$d/gt.json"
printf '[{"image_id": 1, "bbox": [1, 2, 3, 4], "root_cam": [NaN, 0, 1], "score": 1}]' > "$tmp/nan.json"
expect_error "NaN root (as Python writes it)" 1 "$tmp/nan.json" malformed -- \
    --dataset MuPoTS --result "$tmp/nan.json" --gt "$d/gt.json"
printf '[{"image_id": 1, "bbox": [1, 2, 3, 4], "root_cam": [0, 0' > "$tmp/trunc.json"
expect_error "truncated result" 1 "$tmp/trunc.json" "line 1" -- \
    --dataset Human36M --result "$tmp/trunc.json" --gt "$d/gt.json"
expect_error "missing GT file" 1 "$tmp/none.json" -- \
    --dataset MuPoTS --result "$d/result.json" --gt "$tmp/none.json"
expect_error "prediction without GT" 1 "prediction" "no ground truth" -- \
    --dataset Human36M --result "$tmp/Human36M-1/result.json" --gt "$d/result.json"
expect_error "unknown dataset" 2 "COCO" -- --dataset COCO --result "$d/result.json" --gt "$d/gt.json"
expect_error "unknown flag" 2 "--bogus" -- --bogus 1
expect_error "bad threshold" 2 "--ap-thr" -- --dataset MuPoTS --result "$d/result.json" --gt "$d/gt.json" --ap-thr -5
expect_error "the old spelling --thr is gone (one spelling, as test)" 2 "unknown flag '--thr'" -- --dataset MuPoTS \
    --result "$d/result.json" --gt "$d/gt.json" --thr 250
expect_error "missing flags" 2 "required" -- --dataset MuPoTS

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
