# What scripts/quickstart.sh and scripts/quickstart_pose.sh share (sourced from the repository root).

# qs_find_rn: RN = the rootnet that `make install` put on PATH, else this checkout's build/rootnet (built when
# missing); RN_BIN picks another.
qs_find_rn() {
    RN=${RN_BIN:-$(command -v rootnet || echo build/rootnet)}
    RN=$(command -v "$RN" || echo "$RN")
    if [ ! -x "$RN" ] && [ -n "${RN_BIN:-}" ]; then echo "quickstart: RN_BIN=$RN_BIN: no such program" >&2; exit 1; fi
    if [ ! -x "$RN" ]; then say "building rootnet"; make -j2 BUILD=build > /dev/null; fi
}

# qs_epochs LOG SPENT BUDGET MAX: EPOCHS = the epochs a run whose epoch 0 took SPENT s in all (its steps' pace
# in the train.jsonl LOG) fits in BUDGET s, at most MAX and at least 2; EPOCH_S = epoch 0's seconds of steps.
qs_epochs() {
    EPOCH_S=$(awk -F'"s_per_itr": ' '/"s_per_itr"/ { split($2, a, ","); s = a[1] } /"itr_per_epoch"/ { split($0, b, "\"itr_per_epoch\": "); split(b[2], c, ","); n = c[1] }
        END { printf "%.3f", s * n }' "$1")
    EPOCHS=$(awk -v left=$(( $3 - $2 )) -v e="$EPOCH_S" -v max="$4" \
        'BEGIN { n = 1 + int((left - 5) / (1.05 * e + 1.0)); if (n > max) n = max; if (n < 2) n = 2; print n }')
}
