# Shared by tests/t_dist*.sh (sourced, with $RN set): the pass/fail counters
# and ok/bad, skips the test (exit 77) when MPI is absent, sets MPIRUN, and helpers to
# find and watch the ranks.
pass=0; fail=0
ok() { pass=$((pass+1)); echo "ok   $*"; }
bad() { fail=$((fail+1)); echo "FAIL $*"; }
# A skip exits 77, which tests/run.sh counts as skipped (never as passed).
skip_all() { echo "skipped: $*"; echo "0 passed, 0 failed, 1 skipped"; exit 77; }
command -v mpirun > /dev/null || skip_all "no MPI (mpirun not found)"
[ -x "$RN" ] || { echo "FAIL: $RN is not an executable"; echo "0 passed, 1 failed"; exit 1; }
case "$(ldd "$RN" 2> /dev/null)" in
    *libmpi*) ;;
    *) skip_all "no MPI ($RN was built without it: mpicc was not found at build time)" ;;
esac
MPIRUN=(mpirun --oversubscribe -np 2)
[ "$(id -u)" = 0 ] && MPIRUN=(mpirun --allow-run-as-root --oversubscribe -np 2)

# rank_pid MPIRUN_PID RANK: the pid of that rank among mpirun's children.
rank_pid() {
    local c
    for c in $(pgrep -P "$1"); do
        if tr '\0' '\n' < "/proc/$c/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2"; then echo "$c"; return; fi
    done
}

# signal_and_wait MPIRUN_PID VICTIM SIGNAL BOUND_S: sends the signal, waits for
# mpirun (killing it BOUND_S + 30 s later at the latest); sets rc and elapsed (s).
signal_and_wait() {
    local mp=$1 victim=$2 sig=$3 bound=$4 t0 t1
    t0=$(date +%s.%N)
    kill "-$sig" "$victim"
    ( sleep $((bound + 30)); kill -9 "$mp" 2> /dev/null ) & local guard=$!
    wait "$mp"; rc=$?
    t1=$(date +%s.%N)
    kill $guard 2> /dev/null; wait $guard 2> /dev/null
    elapsed=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
}

# ranks_left PIDS...: 0 when none of them runs any more (a zombie has ended; it waits for its reaper).
ranks_left() {
    local p
    for p in "$@"; do
        [ -r "/proc/$p/stat" ] && [ "$(awk '{print $3}' "/proc/$p/stat" 2> /dev/null)" != Z ] && return 1
    done
    return 0
}
