/* rootnet synth: writes a synthetic dataset in the MuCo / MuPoTS / Human3.6M layout. */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "data/synth.h"

int rn_cmd_synth(int argc, char **argv)
{
    const char *out = NULL, *format = "muco";
    long images = 100, seed = 1, width = 512, height = 512;
    int no_images = 0, help = 0;
    rn_flag flags[] = {
        RN_FLAG_STR("--out", &out, "output data dir (the readers' data_dir)"),
        RN_FLAG_STR("--format", &format, "muco | mupots | h36m (default muco)"),
        RN_FLAG_I64("--images", &images, "number of images (default 100)"),
        RN_FLAG_I64("--seed", &seed, "random seed (default 1)"),
        RN_FLAG_I64("--width", &width, "image width (default 512)"),
        RN_FLAG_I64("--height", &height, "image height (default 512)"),
        RN_FLAG_BOOL("--no-images", &no_images, "write the annotation JSON only"),
        RN_FLAG_BOOL("--help", &help, "show this help"),
        {0}};
    const char *synopsis = "--out DIR [--format muco|mupots|h36m] [--images N] [--seed S]";
    rn_err err = {{0}};
    if (rn_args_parse(flags, argc, argv, 2, &err)) {
        fprintf(stderr, "rootnet synth: %s\n", err.msg);
        rn_args_usage(stderr, "synth", synopsis, flags);
        return 2;
    }
    if (help) {
        rn_args_usage(stdout, "synth", synopsis, flags);
        return 0;
    }
    rn_synth_opts o = {.images = images, .seed = (uint64_t)seed, .no_images = no_images};
    if (!out) {
        fprintf(stderr, "rootnet synth: --out is required\n");
        return 2;
    }
    if (rn_synth_parse_format(format, &o.format)) {
        fprintf(stderr, "rootnet synth: --format: unknown format '%s' (muco, mupots, h36m)\n", format);
        return 2;
    }
    if (width < 64 || width > 8192 || height < 64 || height > 8192) {
        fprintf(stderr, "rootnet synth: --width/--height must be 64..8192\n");
        return 2;
    }
    o.width = (int)width;
    o.height = (int)height;
    if (rn_synth_write(out, &o, &err)) {
        fprintf(stderr, "rootnet synth: %s\n", err.msg);
        return 1;
    }
    printf("synth: wrote %ld %s images%s under %s\n", images, format, no_images ? " (annotations only)" : "", out);
    return 0;
}
