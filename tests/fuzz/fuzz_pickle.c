/* libFuzzer target: the pickle VM (rn_pickle_run) on its own, pickles run in
 * turn as in the legacy torch.save format; persistent ids become storages. */
#include "fuzz.h"
#include "io/pickle.h"

static int persistent(void *ctx, const pk_val *pid, pk_val *out, rn_err *err)
{
    (void)ctx;
    if (pid->kind != PK_TUPLE) return rn_err_set(err, "persistent id is not a tuple");
    out->kind = PK_STORAGE;
    out->i = (int64_t)pid->n;
    return 0;
}

/* Reads every value reachable from v, at most *budget of them (memoised values may form a huge DAG). */
static void walk(const pk_val *v, long *budget)
{
    if (!v || --*budget < 0) return;
    if (v->kind == PK_STR || v->kind == PK_BYTES || v->kind == PK_BIGINT) fuzz_touch(v->s, v->len);
    if (v->kind == PK_GLOBAL) fuzz_touch(v->s2, v->len2);
    if (v->kind == PK_TENSOR) RN_ASSERT(v->t && v->t->ndim >= 0 && v->t->ndim <= RN_TENSOR_MAXDIM);
    for (size_t i = 0; i < v->n; i++) walk(v->items[i], budget);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rn_pickle vm;
    rn_pickle_init(&vm, persistent, NULL);
    size_t pos = 0;
    for (int k = 0; k < 4 && pos < size; k++) {
        rn_err err = {{0}};
        pk_val *root = NULL;
        size_t used = 0;
        int rc = rn_pickle_run(&vm, data + pos, size - pos, &used, &root, FUZZ_NAME, &err);
        fuzz_check_err(rc, &err);
        if (rc) break;
        RN_ASSERT(used > 0 && used <= size - pos);
        long budget = 1 << 16;
        walk(root, &budget);
        pos += used;
    }
    rn_pickle_free(&vm);
    return 0;
}
