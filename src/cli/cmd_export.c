/* rootnet export: a snapshot as ONNX and/or as the authors' .pth.tar. */
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/exit.h"
#include "nn/net.h"
#include "export/export.h"
#include "nn/run_settings.h"
#include "nn/weights.h"

typedef struct export_cfg {
    const char *in, *onnx, *pth;
    long input_size, backbone;
} export_cfg;

static int export_onnx(const export_cfg *c, const rn_params *p, const rn_run_settings *s, rn_err *err)
{
    if (rn_export_onnx(p, s->input_size, s->input_size, c->onnx, err)) return -1;
    const rn_net *net = p->net;
    if (rn_net_uses_k(net))
        printf("%s: ONNX (opset %d), %s ResNet-%d, input_img (N, 3, %d, %d), k_value (N, 1) -> coord (N, 3)\n",
               c->onnx, RN_ONNX_OPSET, net->title, p->depth, s->input_size, s->input_size);
    else
        printf("%s: ONNX (opset %d), %s ResNet-%d (%s's joints), input_img (N, 3, %d, %d) -> coord (N, %d, 3)\n",
               c->onnx, RN_ONNX_OPSET, net->title, p->depth, net->skeleton, s->input_size, s->input_size, net->K);
    return 0;
}

static int export_pth(const export_cfg *c, rn_params *p, const rn_tensors *ts, rn_err *err)
{
    rn_export_state st;
    if (rn_export_read_state(&st, p, ts, c->in, err)) return -1;
    if (st.mid_epoch)
        fprintf(stderr, "rootnet export: warning: %s was taken inside epoch %d; the authors' train.py resumes at "
                        "epoch %d from the start\n", c->in, st.epoch, st.epoch + 1);
    if (rn_export_authors_pth(p, st.epoch, &st.optim, c->pth, err)) return -1;
    if (st.optim.has_moments)
        printf("%s: authors' snapshot, epoch %d, ResNet-%d, Adam state after %ld steps (lr %g)\n", c->pth, st.epoch,
               p->depth, st.optim.adam.step, st.optim.adam.lr);
    else
        printf("%s: authors' snapshot, epoch %d, ResNet-%d, no Adam state in %s (a fresh Adam, lr %g)\n", c->pth,
               st.epoch, p->depth, c->in, st.optim.adam.lr);
    return 0;
}

/* RN_EXIT_OK, RN_EXIT_USAGE (--input-size contradicts the snapshot's config) or RN_EXIT_FAIL, with err. */
static int export_run(const export_cfg *c, rn_err *err)
{
    if (c->onnx && rn_export_onnx_check(c->onnx, err)) return RN_EXIT_FAIL;
    rn_tensors ts;
    if (rn_tensors_load(&ts, c->in, err)) return RN_EXIT_FAIL;
    rn_run_settings s;
    int rc = rn_run_settings_read(&s, &ts, c->in, err) ? RN_EXIT_FAIL : RN_EXIT_OK;
    if (!rc && rn_run_settings_merge(&s, (int)c->input_size, 0, c->in, err)) rc = RN_EXIT_USAGE;
    rn_params p;
    rn_rng rng;
    rn_rng_seed(&rng, 1);
    if (!rc && rn_weights_from_tensors(&p, &ts, c->in, (int)c->backbone, &rng, err)) rc = RN_EXIT_FAIL;
    else if (!rc) {
        if ((c->onnx && export_onnx(c, &p, &s, err)) || (c->pth && export_pth(c, &p, &ts, err))) rc = RN_EXIT_FAIL;
        rn_params_free(&p);
    }
    rn_tensors_free(&ts);
    return rc;
}

int rn_cmd_export(int argc, char **argv)
{
    export_cfg c = {0};
    rn_flag flags[] = {
        RN_FLAG_STR("--snapshot", &c.in, "weights: a rootnet snapshot, safetensors, the authors' .pth.tar (required)"),
        RN_FLAG_STR("--onnx", &c.onnx, "write OUT.onnx: RootNet in eval mode, opset 13, dynamic batch"),
        RN_FLAG_STR("--pth", &c.pth, "write OUT.pth.tar: the authors' snapshot {epoch, network, optimizer}"),
        RN_FLAG_RANGE("--input-size", &c.input_size, 0, 4096,
                      "ONNX input size, a multiple of 32 (default: the snapshot's, else 256)"),
        RN_FLAG_RANGE("--backbone", &c.backbone, 0, 1000, "require this ResNet depth (default: from the weights)"),
        RN_FLAG_ALIAS("--weights", "--snapshot"),
        RN_FLAG_ALIAS("--size", "--input-size"),
        {0}};
    const char *syn = "--snapshot W [--onnx OUT.onnx] [--pth OUT.pth.tar] [--input-size S]";
    int h = rn_args_handle(flags, argc, argv, syn);
    if (h >= 0) return h;
    if (!c.in || (!c.onnx && !c.pth)) return rn_args_misuse(flags, argv, syn, "--snapshot and --onnx and/or --pth are required");
    if (c.input_size && c.input_size % 32) {
        fprintf(stderr, "rootnet export: --input-size %ld: must be a multiple of 32\n", c.input_size);
        return RN_EXIT_USAGE;
    }
    rn_err err = {{0}};
    int rc = export_run(&c, &err);
    return rc ? rn_cli_fail("export", rc, &err) : RN_EXIT_OK;
}
