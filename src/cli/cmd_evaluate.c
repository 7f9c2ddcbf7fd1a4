/* rootnet evaluate: the authors' metric on a result file and a ground-truth file. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/exit.h"
#include "eval/metrics.h"
#include "eval/results.h"

#define MAX_THR 16

typedef struct eval_opts {
    const char *dataset, *result, *gt;
    rn_multi thr_flags;
    double thr[MAX_THR]; /* --ap-thr, parsed */
    int nthr;
    int json;
} eval_opts;

static int parse_thresholds(double *thr, int *n, const rn_multi *m, rn_err *err)
{
    *n = 0;
    if (m->n == 0) thr[(*n)++] = 250.0;
    for (int i = 0; i < m->n; i++) {
        char *end = NULL;
        errno = 0;
        double t = strtod(m->v[i], &end);
        if (errno || end == m->v[i] || *end || !(t > 0) || !isfinite(t))
            return rn_err_set(err, "--ap-thr: '%s' is not a positive number (mm)", m->v[i]);
        if (*n >= MAX_THR) return rn_err_set(err, "--ap-thr: at most %d thresholds", MAX_THR);
        thr[(*n)++] = t;
    }
    return 0;
}

static void print_mrpe_json(const rn_mrpe *m)
{
    printf("\"mrpe\": {\"total\": %.17g, \"x\": %.17g, \"y\": %.17g, \"z\": %.17g, \"n\": %zu}", m->total, m->x, m->y,
           m->z, m->n);
}

/* MuPoTS MRPE needs one prediction per GT annotation, in the annotation file's order (what test writes
 * with GT boxes); detector boxes do not pair. 1 when paired (idx filled), else 0. */
static int pair_in_order(size_t *idx, const rn_root_pred *p, size_t np, const rn_root_gt *g, size_t ng)
{
    int ok = np == ng && np > 0;
    for (size_t i = 0; ok && i < np; i++) ok = p[i].image_id == g[i].image_id, idx[i] = i;
    return ok;
}

static int eval_mupots(const eval_opts *o, const rn_root_pred *p, size_t np, const rn_root_gt *g, size_t ng,
                       rn_err *err)
{
    rn_ap_result r[MAX_THR];
    for (int t = 0; t < o->nthr; t++)
        if (rn_eval_mupots_ap(&r[t], p, np, g, ng, o->thr[t], err)) return -1;
    size_t *idx = rn_xmalloc((np ? np : 1) * sizeof *idx);
    rn_mrpe m = {0};
    int paired = pair_in_order(idx, p, np, g, ng);
    int rc = paired ? rn_eval_mrpe(&m, p, g, idx, np, err) : 0;
    free(idx);
    if (rc) return -1;
    if (o->json) {
        printf("{\"ap\": {");
        for (int t = 0; t < o->nthr; t++)
            printf("%s\"%.17g\": {\"ap\": %.17g, \"tp\": %zu, \"fp\": %zu, \"skipped\": %zu, \"n_gt\": %zu}",
                   t ? ", " : "", o->thr[t], r[t].ap, r[t].n_tp, r[t].n_fp, r[t].n_skipped, r[t].n_gt);
        printf("}}\n");
        return 0;
    }
    for (int t = 0; t < o->nthr; t++) rn_eval_ap_print(stdout, &r[t], NULL);
    if (paired) rn_eval_mrpe_print(stdout, &m, "mm");
    else
        printf("MRPE: not computed: %zu predictions do not pair one to one, in order, with the %zu GT annotations "
               "(test writes such a file with GT boxes; detector boxes are scored by AP alone)\n", np, ng);
    return 0;
}

static int eval_h36m(const eval_opts *o, const rn_root_pred *p, size_t np, const rn_root_gt *g, const size_t *idx,
                     rn_err *err)
{
    rn_h36m_result r;
    if (rn_eval_h36m_mrpe(&r, p, g, idx, np, err)) return -1;
    if (!o->json) {
        rn_eval_mrpe_print(stdout, &r.all, "mm");
        rn_eval_h36m_print(stdout, &r);
        return 0;
    }
    printf("{");
    print_mrpe_json(&r.all);
    printf(", \"actions\": {");
    int first = 1;
    for (int a = 0; a < RN_H36M_ACTIONS; a++) {
        if (!r.action_n[a]) continue;
        printf("%s\"%s\": {\"mrpe\": %.17g, \"n\": %zu}", first ? "" : ", ", rn_h36m_action_names[a], r.action[a],
               r.action_n[a]);
        first = 0;
    }
    printf("}}\n");
    return 0;
}

static int eval_pw3d(const eval_opts *o, const rn_root_pred *p, size_t np, const rn_root_gt *g, const size_t *idx,
                     rn_err *err)
{
    rn_mrpe r;
    if (rn_eval_mrpe(&r, p, g, idx, np, err)) return -1;
    if (o->json) {
        printf("{");
        print_mrpe_json(&r);
        printf("}\n");
    } else {
        rn_eval_mrpe_print(stdout, &r, "m");
    }
    return 0;
}

static int run_eval(const eval_opts *o, rn_eval_kind kind, rn_err *err)
{
    rn_root_pred *p = NULL;
    rn_root_gt *g = NULL;
    size_t np = 0, ng = 0, *idx = NULL;
    int rc = rn_eval_results_read(&p, &np, o->result, kind, err);
    if (!rc) rc = rn_eval_gt_read(&g, &ng, o->gt, err);
    if (rc) goto done;
    if (kind == RN_EVAL_MUPOTS) rc = eval_mupots(o, p, np, g, ng, err);
    if (kind != RN_EVAL_MUPOTS) {
        idx = rn_xmalloc((np ? np : 1) * sizeof *idx);
        rc = rn_eval_pair(idx, p, np, g, ng, kind == RN_EVAL_PW3D, err);
    }
    if (!rc && kind == RN_EVAL_H36M) rc = eval_h36m(o, p, np, g, idx, err);
    if (!rc && kind == RN_EVAL_PW3D) rc = eval_pw3d(o, p, np, g, idx, err);
    if (rc) rn_err_prefix(err, "%s against %s", o->result, o->gt);
done:
    free(idx);
    free(g);
    free(p);
    return rc;
}

int rn_cmd_evaluate(int argc, char **argv)
{
    eval_opts o = {0};
    rn_flag flags[] = {
        RN_FLAG_STR("--dataset", &o.dataset, "MuPoTS, Human36M or PW3D"),
        RN_FLAG_STR("--result", &o.result, "result JSON (the authors' bbox_root_*_output.json format)"),
        RN_FLAG_STR("--gt", &o.gt, "ground truth: MuPoTS-3D.json or a root list [{image_id, ann_id, root_cam, ...}]"),
        RN_FLAG_MULTI("--ap-thr", &o.thr_flags, "MuPoTS AP distance threshold in mm, as test (repeatable; default 250)"),
        RN_FLAG_BOOL("--json", &o.json, "print the metrics as one JSON object"),
        RN_FLAG_ALIAS("--testset", "--dataset"),
        {0}};
    const char *syn = "--dataset MuPoTS|Human36M|PW3D --result FILE --gt FILE [--ap-thr MM] [--json]";
    int h = rn_args_handle(flags, argc, argv, syn);
    if (h >= 0) return h;
    if (!o.dataset || !o.result || !o.gt)
        return rn_args_misuse(flags, argv, syn, "--dataset, --result and --gt are required");
    rn_err err = {{0}};
    rn_eval_kind kind;
    if (rn_eval_kind_parse(&kind, o.dataset, &err) || parse_thresholds(o.thr, &o.nthr, &o.thr_flags, &err))
        return rn_cli_fail("evaluate", RN_EXIT_USAGE, &err);
    return run_eval(&o, kind, &err) ? rn_cli_fail("evaluate", RN_EXIT_FAIL, &err) : RN_EXIT_OK;
}
