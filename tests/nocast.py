"""Finds integer casts and integer rounding applied to camera values, k or
targets anywhere in src/. Used by tests/t_nocast.sh; also self-tests on
planted lines so the scan itself is known to catch what it must.

Protected values: the rn_sample fields k, root_img, root_cam, f, c, bbox_real,
area (as members, s->k / s.f[0]); the model's k and targets (m->k, target[..],
k[..]); and any identifier named focal, princpt, cam_param, joint_cam,
root_cam, root_img, target, tgt. A hit is an explicit integer cast whose
operand mentions one of them, or lrint/lround/round/floor/ceil/trunc/nearbyint
of one of them."""
import re
import sys
import pathlib

INT_T = r"(?:unsigned\s+)?(?:int|long(?:\s+long)?|short|char|unsigned|size_t|ssize_t|u?int(?:8|16|32|64)_t)"
CAST = re.compile(r"\(\s*" + INT_T + r"\s*\)")
ROUND = re.compile(r"\b(?:l?l?rint|l?l?round|floor|ceil|trunc|nearbyint)[fl]?\s*\(")
MEMBER = re.compile(r"(?:->|\.)\s*(?:k|root_img|root_cam|f|c|bbox_real|area)\b(?!\s*\()")
NAMES = re.compile(r"\b(?:focal|princpt|cam_param|joint_cam|root_cam|root_img|target|tgt)\b|\bk\s*\[|\bm->k\b")


def operand(line, i):
    """The cast's operand starting at i: a balanced (...) or an identifier chain."""
    while i < len(line) and line[i] == " ":
        i += 1
    if i < len(line) and line[i] == "(":
        depth = 0
        for j in range(i, len(line)):
            depth += {"(": 1, ")": -1}.get(line[j], 0)
            if depth == 0:
                return line[i:j + 1]
        return line[i:]
    m = re.match(r"[A-Za-z_]\w*(?:\s*(?:->|\.)\s*\w+|\s*\[[^\]]*\])*", line[i:])
    return m.group(0) if m else ""


def balanced_from(line, i):
    depth = 0
    for j in range(i, len(line)):
        depth += {"(": 1, ")": -1}.get(line[j], 0)
        if depth == 0:
            return line[i:j + 1]
    return line[i:]


def protected(expr):
    return MEMBER.search(expr) or NAMES.search(expr)


def scan_line(line):
    code = line.split("//")[0]
    for m in CAST.finditer(code):
        op = operand(code, m.end())
        if op and protected(op):
            return "integer cast of " + op.strip()
    for m in ROUND.finditer(code):
        arg = balanced_from(code, m.end() - 1)
        if protected(arg):
            return "integer rounding of " + arg.strip()
    return None


def self_test():
    bad = ["int z = (int)s->k;", "x = (int)(s->root_cam[2] * 2);", "long f = lrintf(s->f[0]);",
           "q = (int32_t)target[3 * n];", "d = floorf(m->k[n]);", "a = (size_t)(focal[0]);",
           "k[n] = (float)(int)k[n];", "y = roundf(s.root_img[1]);"]
    good = ["int n = (int)c->threads;", "size_t i = (size_t)c * h * w;", "b->n += (size_t)k;",
            "int x0 = (int)floor(fmin(a[0], b[0]) - rad);", "float kk = s->k * 2.0f;",
            "rgb[(size_t)y * w + x] = 0;"]
    ok = all(scan_line(b) for b in bad) and not any(scan_line(g) for g in good)
    if not ok:
        for b in bad:
            print("self-test planted", repr(b), "->", scan_line(b))
        for g in good:
            print("self-test clean", repr(g), "->", scan_line(g))
    return ok


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "src")
    passed = failed = 0
    if self_test():
        passed += 1
    else:
        failed += 1
        print("FAIL: the scanner misses planted casts or flags clean lines")
    files = sorted(p for p in root.rglob("*") if p.suffix in (".c", ".h"))
    hits = []
    for p in files:
        for no, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
            why = scan_line(line)
            if why:
                hits.append(f"{p}:{no}: {why}: {line.strip()}")
    if hits or not files:
        failed += 1
        print("FAIL: camera values, k or targets are cast to integers:" if hits else "FAIL: no sources found")
        print("\n".join(hits))
    else:
        passed += 1
        print(f"scanned {len(files)} files under {root}: no integer casts of camera values, k or targets")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
