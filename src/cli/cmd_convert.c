/* rootnet convert: any weight file rootnet reads -> safetensors with PyTorch state_dict names. */
#include <stdint.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/exit.h"
#include "nn/weights.h"

int rn_cmd_convert(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    long backbone = 0, seed = 1;
    rn_flag flags[] = {
        RN_FLAG_STR("--snapshot", &in, "input: safetensors, PyTorch .pth / authors' snapshot, torchvision ResNet (required)"),
        RN_FLAG_STR("--output", &out, "output safetensors with PyTorch state_dict names (required)"),
        RN_FLAG_RANGE("--backbone", &backbone, 0, 1000, "require this ResNet depth (default: from the file)"),
        RN_FLAG_I64("--seed", &seed, "seed of the authors' head init for a torchvision backbone file (1)"),
        RN_FLAG_ALIAS("--weights", "--snapshot"),
        RN_FLAG_ALIAS("--out", "--output"),
        {0}};
    const char *syn = "--snapshot IN --output OUT.safetensors";
    int h = rn_args_handle(flags, argc, argv, syn);
    if (h >= 0) return h;
    if (!in || !out) return rn_args_misuse(flags, argv, syn, "--snapshot and --output are required");
    rn_err err = {{0}};
    rn_params p;
    rn_rng rng;
    rn_rng_seed(&rng, (uint64_t)seed);
    if (rn_weights_load(&p, in, (int)backbone, &rng, &err)) return rn_cli_fail("convert", RN_EXIT_FAIL, &err);
    int rc = rn_weights_save(&p, out, NULL, &err);
    rn_params_free(&p);
    return rc ? rn_cli_fail("convert", RN_EXIT_FAIL, &err) : 0;
}
