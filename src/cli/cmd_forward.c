/* rootnet forward: one forward pass over .npy inputs (the model core's test interface). */
#include <stdint.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/exit.h"
#include "cli/model_common.h"
#include "infer/infer_model.h"
#include "io/tensors.h"
#include "nn/model.h"
#include "nn/net.h"
#include "nn/weights.h"

/* (N, 3) for a net of one output row (RootNet), else (N, K, 3). */
static int write_coords(const char *path, const float *coord, int n, int K, rn_err *err)
{
    int64_t shape[3] = {n, K, 3}, one[2] = {n, 3};
    return K == 1 ? rn_npy_write(path, RN_F32, 2, one, coord, err) : rn_npy_write(path, RN_F32, 3, shape, coord, err);
}

/* The images, and k when the net takes it (RootNet; PoseNet takes none). */
static int read_inputs(rn_cli_input *x, rn_cli_input *k, int64_t *xd, const char *images, const char *kpath,
                       const rn_net *net, rn_err *err)
{
    int64_t want[3] = {3, -1, -1};
    int uses_k = rn_net_uses_k(net);
    memset(k, 0, sizeof *k);
    if (uses_k != (kpath != NULL))
        return rn_err_set(err, "--k: %s %s", net->title, uses_k ? "needs k, the (N) depth factors" : "takes no k");
    if (rn_cli_input_read(x, images, "images", 3, want, xd, err)) return -1;
    if (rn_cli_input_check_size(xd, images, err) ||
        (uses_k && (rn_cli_input_read_vec(k, kpath, "k", err) || rn_cli_input_same_n(x, k, "k", kpath, err) ||
                    rn_cli_input_check_k(k, kpath, err)))) {
        rn_cli_input_free(x);
        rn_cli_input_free(k);
        return -1;
    }
    return 0;
}

int rn_cmd_forward(int argc, char **argv)
{
    const char *weights = NULL, *images = NULL, *kpath = NULL, *out = NULL, *precision = "fp32", *device = NULL;
    int eval = 0, fold = 0;
    long threads = 0, backbone = 0;
    rn_flag flags[] = {
        RN_FLAG_STR("--snapshot", &weights, "weights: safetensors or PyTorch .pth (required)"),
        RN_FLAG_BOOL("--eval", &eval, "use BN running statistics (default: batch statistics)"),
        RN_FLAG_BOOL("--fold", &fold, "with --eval: BN folded into the convs, fused epilogues (what demo/test run)"),
        RN_FLAG_STR("--images", &images, "(N,3,H,W) float32 .npy, normalised (required)"),
        RN_FLAG_STR("--k", &kpath, "(N) or (N,1) float32 .npy (required for RootNet; PoseNet takes none)"),
        RN_FLAG_STR("--output", &out, "output .npy: RootNet (N,3) x, y on the output grid, depth; PoseNet (N,J,3) x, y "
                    "on the output grid, z in depth bins (required)"),
        RN_FLAG_RANGE("--backbone", &backbone, 0, 1000, "require this ResNet depth (default: from the weights)"),
        RN_FLAG_RANGE("--threads", &threads, 0, 1024, "compute threads (default: OMP_NUM_THREADS)"),
        RN_FLAG_STR("--device", &device, "the compute device: cpu (default), ref, cuda or cuda:N, those built in (rootnet --version lists them)"),
        RN_FLAG_STR("--precision", &precision,
                    "fp32 (default) | bf16: convs compute in bf16 | bf16-o2: activations stored in bf16 too"),
        RN_FLAG_ALIAS("--weights", "--snapshot"),
        RN_FLAG_ALIAS("--out", "--output"),
        {0}};
    const char *syn = "--snapshot W [--eval] --images X.npy [--k K.npy] --output OUT.npy [--precision bf16|bf16-o2] "
                      "[--device cpu|ref]";
    int h = rn_args_handle(flags, argc, argv, syn);
    if (h >= 0) return h;
    rn_err err = {{0}};
    if (!weights || !images || !out)
        return rn_args_misuse(flags, argv, syn, "--snapshot, --images and --output are required (and --k for RootNet)");
    if (fold && !eval) return rn_args_misuse(flags, argv, syn, "--fold needs --eval (folding uses the running statistics)");
    rn_precision prec;
    if (rn_precision_choose(precision, RN_PREC_ALL, device, &prec, &err) ||
        rn_policy_check_device(rn_policy_get(prec), device, &err))
        return rn_cli_fail("forward", RN_EXIT_USAGE, &err);
    rn_policy_say_emulated(rn_policy_get(prec), device);
    rn_params p;
    rn_model m;
    rn_rng rng;
    rn_rng_seed(&rng, 1);
    if (rn_weights_load(&p, weights, (int)backbone, &rng, &err)) return rn_cli_fail("forward", RN_EXIT_FAIL, &err);
    rn_cli_input x, k;
    int64_t xd[3];
    int rc = read_inputs(&x, &k, xd, images, kpath, p.net, &err);
    if (!rc) {
        rn_infer_cfg c = {.base = {.device = device, .threads = (int)threads}, .precision = prec, .fold = fold,
                          .batch = (int)x.n, .h = (int)xd[1], .w = (int)xd[2]};
        rc = rn_infer_model_open(&m, &p, &c, &err);
        if (!rc) {
            rn_model_forward(&m, x.d, k.d, !eval);
            rc = write_coords(out, rn_model_coords(&m), m.N, m.K, &err);
            rn_model_destroy(&m);
        }
        rn_cli_input_free(&x);
        rn_cli_input_free(&k);
    }
    rn_params_free(&p);
    return rc ? rn_cli_fail("forward", RN_EXIT_FAIL, &err) : 0;
}
