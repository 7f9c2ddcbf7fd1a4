/* rootnet synth: writes a synthetic dataset in the MuCo / MuPoTS / Human3.6M / MS COCO / MPII layout. */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/exit.h"
#include "data/synth/synth.h"

int rn_cmd_synth(int argc, char **argv)
{
    const char *out = NULL, *format = "muco";
    long images = 100, seed = 1, width = 512, height = 512;
    int no_images = 0;
    rn_flag flags[] = {
        RN_FLAG_STR("--output", &out, "output data dir (the readers' data_dir)"),
        RN_FLAG_STR("--format", &format, "muco | mupots | h36m | coco | mpii (default muco)"),
        RN_FLAG_RANGE("--images", &images, 1, 10000000, "number of images (default 100)"),
        RN_FLAG_I64("--seed", &seed, "random seed (default 1)"),
        RN_FLAG_RANGE("--width", &width, 64, 8192, "image width (default 512)"),
        RN_FLAG_RANGE("--height", &height, 64, 8192, "image height (default 512)"),
        RN_FLAG_BOOL("--no-images", &no_images, "write the annotation JSON only"),
        RN_FLAG_ALIAS("--out", "--output"),
        {0}};
    const char *synopsis = "--output DIR [--format muco|mupots|h36m|coco|mpii] [--images N] [--seed S]";
    int h = rn_args_handle(flags, argc, argv, synopsis);
    if (h >= 0) return h;
    if (!out) return rn_args_misuse(flags, argv, synopsis, "--output is required");
    rn_err err = {{0}};
    rn_synth_opts o = {.images = images, .seed = (uint64_t)seed, .no_images = no_images};
    if (rn_synth_parse_format(format, &o.format)) {
        fprintf(stderr, "rootnet synth: --format: unknown format '%s' (muco, mupots, h36m, coco, mpii)\n", format);
        return RN_EXIT_USAGE;
    }
    o.width = (int)width;
    o.height = (int)height;
    if (rn_synth_write(out, &o, &err)) return rn_cli_fail("synth", RN_EXIT_FAIL, &err);
    printf("synth: wrote %ld %s images%s under %s\n", images, format, no_images ? " (annotations only)" : "", out);
    return 0;
}
