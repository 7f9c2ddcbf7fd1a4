/* rootnet inspect: one sample as the network would see it. Prints the record
 * as JSON and writes the patch (.png de-normalised 8-bit RGB, or .npy float
 * (3, H, W)). With --augment the augmentation is the loader's for a
 * single-set training run at --epoch (stream epoch * N + index). The crop is
 * the loader's (the record's float64 box centre where it has one); the JSON
 * carries the affine it used ("trans", 2x3, (flipped) image -> patch) and
 * every real with 17 significant digits, so that a reference can compare it
 * exactly (tools/cv_ref.py check). */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/data_flags.h"
#include "cli/exit.h"
#include "data/image/draw.h"
#include "data/load/augment.h"
#include "data/load/loader.h"
#include "data/sets/sample.h"
#include "io/tensors.h"

typedef struct inspect_args {
    const char *data_dir, *dataset, *split, *out, *cache_dir, *prep_dir, *skeleton;
    long index, seed, epoch;
    int augment, raw_norm01, fast_decode;
} inspect_args;

/* De-normalises the (3, h, w) tensor to 8-bit RGB and writes a PNG. */
static int write_png(const char *path, const float *x, int h, int w, const rn_crop_cfg *cfg, rn_err *err)
{
    unsigned char *rgb = rn_xmalloc((size_t)3 * h * w);
    for (int c = 0; c < 3; c++)
        for (size_t i = 0; i < (size_t)h * w; i++) {
            double v = (x[(size_t)c * h * w + i] * cfg->std[c] + cfg->mean[c]) / cfg->pixel_scale;
            rgb[3 * i + (size_t)c] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : lrint(v));
        }
    int rc = rn_rgb_write(path, &(rn_rgb){.px = rgb, .w = w, .h = h}, err);
    free(rgb);
    return rc;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static json_t *record_json(const inspect_args *a, const rn_sample *s, const char *path, const rn_aug *aug,
                           const rn_crop_out *o)
{
    return json_pack("{s:s, s:s, s:I, s:s, s:[f,f,f,f], s:f, s:[f,f,f], s:[f,f], s:f, s:f, s:f, s:i, s:i, "
                     "s:{s:f, s:b, s:[f,f,f], s:f, s:[i,i,i,i]}, s:[[f,f,f],[f,f,f]], s:i, s:s}",
                     "dataset", a->dataset, "split", a->split, "index", (json_int_t)a->index, "image", path,
                     "bbox", s->bbox[0], s->bbox[1], s->bbox[2], s->bbox[3], "k", s->k, "root_img",
                     s->root_img[0], s->root_img[1], s->root_img[2], "root_out", o->root[0], o->root[1], "root_vis", s->root_vis, "vis",
                     o->root_vis, "depth", s->root_img[2], "have_depth", s->have_depth, "image_id", s->image_id,
                     "aug", "rot", aug->rot, "flip", aug->flip, "color", aug->color[0], aug->color[1], aug->color[2], "scale", aug->scale, "occlusion", o->occ[0], o->occ[1], o->occ[2], o->occ[3],
                     "trans", o->trans[0], o->trans[1], o->trans[2], o->trans[3], o->trans[4], o->trans[5],
                     "dct_scale", o->scale, "out", a->out);
}

/* PoseNet's targets of the record onto a->skeleton, as the loader's row: {"skeleton", "target" (K, 3), "vis" (K)}. */
static json_t *joints_json(const inspect_args *a, const rn_dataset *ds, const rn_crop_out *o, const rn_aug *aug,
                           const rn_crop_cfg *cfg, rn_err *err)
{
    float t[RN_LOADER_MAX_K * 3], v[RN_LOADER_MAX_K];
    int K;
    if (rn_loader_joint_targets(t, v, &K, ds, (size_t)a->index, a->skeleton, o, aug->flip, cfg, 64, err)) return NULL;
    json_t *jt = json_array(), *jv = json_array();
    for (int k = 0; k < K; k++) {
        json_array_append_new(jt, json_pack("[f,f,f]", t[3 * k], t[3 * k + 1], t[3 * k + 2]));
        json_array_append_new(jv, json_real(v[k]));
    }
    return json_pack("{s:s, s:o, s:o}", "skeleton", a->skeleton, "target", jt, "vis", jv);
}

static int inspect_run(const inspect_args *a, const rn_dataset *ds, rn_err *err)
{
    if (a->index < 0 || (size_t)a->index >= ds->n)
        return rn_err_set(err, "--index %ld out of range: %s has %zu records", a->index, a->dataset, ds->n);
    const rn_sample *s = &ds->samples[a->index];
    char path[8192];
    rn_dataset_image_path(ds, s, path, sizeof path);
    rn_crop_cfg cfg;
    rn_crop_cfg_default(&cfg);
    if (a->raw_norm01) cfg.pixel_scale = 1.0f / 255;
    cfg.fast_decode = a->fast_decode;
    cfg.prep_dir = a->prep_dir;
    rn_aug aug;
    rn_aug_none(&aug);
    if (a->augment) {
        rn_rng r;
        rn_rng_seed2(&r, (uint64_t)a->seed, (uint64_t)a->epoch * ds->n + (uint64_t)a->index);
        if (a->skeleton) rn_aug_draw_posenet(&aug, &r);
        else rn_aug_draw(&aug, &r);
    }
    /* The crop as the loader makes it for training: the float64 box centre where the reader kept one. */
    rn_crop_in in = {.path = path, .root = {s->root_img[0], s->root_img[1]}, .root_vis = s->root_vis};
    in.has_center = rn_sample_center(s, in.center);
    in.has_size = rn_sample_size(s, in.size);
    memcpy(in.bbox, s->bbox, sizeof in.bbox);
    float *x = rn_xmalloc(sizeof(float) * 3 * cfg.in_w * cfg.in_h);
    rn_crop_ctx ctx = {0};
    rn_crop_out o;
    int rc = rn_crop_sample(x, &o, &ctx, &in, &aug, &cfg, err);
    if (rc) rn_err_prefix(err, "%s record %ld", a->dataset, a->index);
    else if (ends_with(a->out, ".npy")) rc = rn_npy_write(a->out, RN_F32, 3, (int64_t[]){3, cfg.in_h, cfg.in_w}, x, err);
    else rc = write_png(a->out, x, cfg.in_h, cfg.in_w, &cfg, err);
    if (!rc) {
        json_t *j = record_json(a, s, path, &aug, &o); /* NULL when a value is not finite (jansson refuses it) */
        json_t *jj = j && a->skeleton ? joints_json(a, ds, &o, &aug, &cfg, err) : NULL;
        if (jj) json_object_set_new(j, "joints", jj);
        else if (j && a->skeleton) rc = -1, json_decref(j), j = NULL;
        char *txt = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
        if (txt) printf("%s\n", txt);
        else if (!rc) rc = rn_err_set(err, "%s record %ld: a value of the record or its crop is not finite, no JSON written",
                             a->dataset, a->index);
        free(txt);
        json_decref(j);
    }
    rn_crop_ctx_free(&ctx);
    free(x);
    return rc;
}

static int check_args(const inspect_args *a, rn_split *split, rn_err *err)
{
    if (!strcmp(a->split, "train")) *split = RN_SPLIT_TRAIN;
    else if (!strcmp(a->split, "test")) *split = RN_SPLIT_TEST;
    else return rn_err_set(err, "--split: '%s' is not train or test", a->split);
    if (!ends_with(a->out, ".png") && !ends_with(a->out, ".npy"))
        return rn_err_set(err, "--output: '%s' must end in .png or .npy", a->out);
    return 0;
}

int rn_cmd_inspect(int argc, char **argv)
{
    inspect_args a = {.split = "train"};
    rn_flag flags[] = {
        RN_FLAG_STR("--data-dir", &a.data_dir, "dataset root (the authors' data/ layout)"),
        RN_FLAG_STR("--dataset", &a.dataset, "Human36M, MuCo, MuPoTS, MSCOCO, MPII, PW3D"),
        RN_FLAG_STR("--split", &a.split, "train or test (default train)"),
        RN_FLAG_RANGE("--index", &a.index, 0, LONG_MAX, "record index"),
        RN_FLAG_BOOL("--augment", &a.augment, "apply the training augmentation"),
        RN_FLAG_I64("--seed", &a.seed, "augmentation seed (default 0)"),
        RN_FLAG_RANGE("--epoch", &a.epoch, 0, INT_MAX, "epoch for the augmentation stream (default 0)"),
        RN_FLAG_BOOL("--norm01", &a.raw_norm01, "ImageNet normalisation on [0,1] instead of the authors' 0..255"),
        RN_FLAG_BOOL("--fast-decode", &a.fast_decode, "decode JPEGs at 1/2, 1/4, 1/8 size when the box is that much larger than the input (faster, not the authors' pixels)"),
        RN_FLAG_STR("--skeleton", &a.skeleton, "PoseNet's targets onto this joint set (Human36M, MuCo, ...), as the "
                    "loader's: \"joints\" in the JSON"),
        RN_FLAG_STR("--prep-dir", &a.prep_dir, "prepared frames (rootnet dataset --prepare; same pixels)"),
        RN_CACHE_DIR_FLAG(&a.cache_dir),
        RN_FLAG_STR("--output", &a.out, "patch.png (de-normalised RGB) or patch.npy (float (3,H,W))"),
        RN_FLAG_ALIAS("--data", "--data-dir"),
        RN_FLAG_ALIAS("--name", "--dataset"),
        RN_FLAG_ALIAS("--out", "--output"),
        {0}};
    const char *syn = "--data-dir D --dataset NAME --split train|test --index I [--augment --seed S] --output F";
    int h = rn_args_handle(flags, argc, argv, syn);
    if (h >= 0) return h;
    if (!a.data_dir || !a.dataset || !a.out)
        return rn_args_misuse(flags, argv, syn, "--data-dir, --dataset and --output are required");
    rn_err err = {{0}};
    rn_split split = RN_SPLIT_TRAIN;
    if (check_args(&a, &split, &err)) return rn_cli_fail("inspect", RN_EXIT_USAGE, &err);
    rn_dataset ds;
    rn_dataset_opts opts = {.protocol = 2, .input_w = 256, .input_h = 256, .cache_dir = a.cache_dir, .warn = stderr};
    if (rn_dataset_load(&ds, a.dataset, a.data_dir, split, &opts, &err)) return rn_cli_fail("inspect", RN_EXIT_FAIL, &err);
    int rc = inspect_run(&a, &ds, &err);
    rn_dataset_free(&ds);
    return rc ? rn_cli_fail("inspect", RN_EXIT_FAIL, &err) : RN_EXIT_OK;
}
