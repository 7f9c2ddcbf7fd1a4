/* libFuzzer target: the result-file and ground-truth readers of `rootnet
 * evaluate` (rn_eval_results_parse, rn_eval_gt_parse). The first byte picks
 * the reader: 0 MuPoTS, 1 Human36M, 2 3DPW result files, 3 ground truth. */
#include <math.h>
#include <stdlib.h>

#include "eval/results.h"
#include "fuzz.h"

static int finite3(const double *v) { return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const char *json = (const char *)data + 1;
    rn_err err = {{0}};
    size_t n = 0;
    int kind = data[0] % 4;
    if (kind < 3) {
        rn_root_pred *p = NULL;
        int rc = rn_eval_results_parse(&p, &n, json, size - 1, FUZZ_NAME, (rn_eval_kind)kind, &err);
        fuzz_check_err(rc, &err);
        for (size_t i = 0; !rc && i < n; i++)
            RN_ASSERT(finite3(p[i].root_cam) && p[i].bbox[2] > 0 && p[i].bbox[3] > 0 && isfinite(p[i].score));
        free(p);
    } else {
        rn_root_gt *g = NULL;
        int rc = rn_eval_gt_parse(&g, &n, json, size - 1, FUZZ_NAME, &err);
        fuzz_check_err(rc, &err);
        for (size_t i = 0; !rc && i < n; i++) RN_ASSERT(finite3(g[i].root_cam));
        free(g);
    }
    return 0;
}
