/* rootnet dataset: loads an annotation set through the readers and the cache,
 * prints a summary, optionally dumps every record as CSV and prepares every
 * JPEG frame once for exact crops that decode only themselves (data/image/prep.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/exit.h"
#include "core/afile.h"
#include "core/profile.h"
#include "data/image/prep.h"
#include "data/sets/sample.h"
#include "io/tensors.h"
#include "nn/run_settings.h"

static int dump_csv(const rn_dataset *ds, const char *path, rn_err *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return rn_err_set(err, "%s: out of memory", path);
    fprintf(f, "path,image_id,ann_id,width,height,bx,by,bw,bh,area,k,rx,ry,rz,cx,cy,cz,vis,fx,fy,px,py,score,"
               "have_depth,action,subject,is_valid\n");
    for (size_t i = 0; i < ds->n; i++) {
        const rn_sample *s = &ds->samples[i];
        fprintf(f, "%s,%d,%d,%d,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%g,%.9g,%.9g,%.9g,%.9g,%g,%d,%d,%d,%d\n",
                ds->strings + s->path_off, s->image_id, s->ann_id, s->width, s->height, s->bbox[0], s->bbox[1],
                s->bbox[2], s->bbox[3], s->area, s->k, s->root_img[0], s->root_img[1], s->root_img[2],
                s->root_cam[0], s->root_cam[1], s->root_cam[2], s->root_vis, s->f[0], s->f[1], s->c[0], s->c[1],
                s->score, s->have_depth, s->action, s->subject, s->is_valid);
    }
    int rc = fclose(f) ? rn_err_set(err, "%s: out of memory", path) : 0;
    rn_afile af;
    if (!rc) rc = rn_afile_open(&af, path, err) || rn_afile_write(&af, text, len, err) || rn_afile_commit(&af, err) ? -1 : 0;
    free(text);
    return rc;
}

/* Every record's joints as float32 (n, J, RN_JOINT_F): img x, y, depth - root depth, cam X, Y, Z, vis. */
static int dump_joints(const rn_dataset *ds, const char *path, rn_err *err)
{
    if (ds->J == 0)
        return rn_err_set(err, "%s: --joints: the %s reader has no joints (rootnet reads only its root)", path,
                          ds->name);
    int64_t shape[3] = {(int64_t)ds->n, ds->J, RN_JOINT_F};
    static const float none = 0;
    if (rn_npy_write(path, RN_F32, 3, shape, ds->n ? ds->joints : &none, err)) return -1;
    printf("joints: %zu x %d x %d (%s: img x, y, depth - root depth, cam X, Y, Z, vis) written to %s\n", ds->n,
           ds->J, RN_JOINT_F, ds->skeleton, path);
    return 0;
}

static int cmp_path(const void *a, const void *b, void *strings)
{
    return strcmp((const char *)strings + *(const uint32_t *)a, (const char *)strings + *(const uint32_t *)b);
}

/* One prepared file per distinct image of ds in dir (built, or reused when up to date). */
static int prepare(const rn_dataset *ds, const char *dir)
{
    if (mkdir(dir, 0755) && errno != EEXIST) {
        fprintf(stderr, "rootnet dataset: %s: cannot create: %s\n", dir, strerror(errno));
        return RN_EXIT_FAIL;
    }
    int stale = rn_stale_temps_in(dir, ".rnp");
    if (stale) printf("prepare: removed %d temporaries left in %s by an interrupted --prepare\n", stale, dir);
    uint32_t *offs = rn_xmalloc(sizeof *offs * (ds->n ? ds->n : 1));
    for (size_t i = 0; i < ds->n; i++) offs[i] = ds->samples[i].path_off;
    qsort_r(offs, ds->n, sizeof *offs, cmp_path, (void *)ds->strings);
    double t0 = rn_prof_now();
    size_t frames = 0, built = 0, failed = 0;
    uint64_t bytes = 0, src_bytes = 0;
    for (size_t i = 0; i < ds->n; i++) {
        if (i && !strcmp(ds->strings + offs[i], ds->strings + offs[i - 1])) continue;
        char src[8192], prep[4200];
        snprintf(src, sizeof src, "%s/%s", ds->data_dir, ds->strings + offs[i]);
        rn_prep_path(prep, sizeof prep, dir, src);
        rn_prep_info info;
        rn_err err = {{0}};
        struct stat st;
        if (rn_prep_build(src, prep, &info, &err)) {
            fprintf(stderr, "rootnet dataset: prepare: %s\n", err.msg);
            failed++;
            continue;
        }
        frames++, built += (size_t)info.built, bytes += info.bytes;
        src_bytes += stat(src, &st) ? 0 : (uint64_t)st.st_size;
    }
    free(offs);
    double s = rn_prof_now() - t0;
    printf("prepared %zu frames in %s (%zu built, %zu up to date, %zu failed) in %.1f s: %.1f MB (sources %.1f MB), "
           "%.1f MB per 1000 people\n", frames, dir, built, frames - built, failed, s, (double)bytes / 1e6,
           (double)src_bytes / 1e6, ds->n ? (double)bytes / 1e3 / (double)ds->n : 0.0);
    return failed ? RN_EXIT_FAIL : RN_EXIT_OK;
}

int rn_cmd_dataset(int argc, char **argv)
{
    const char *name = NULL, *data = NULL, *split = "train", *dump = NULL, *cache_dir = NULL, *prep_dir = NULL,
               *joints = NULL;
    long protocol = 2, input_size = 256;
    int det = 0, no_cache = 0;
    rn_flag flags[] = {
        RN_FLAG_STR("--dataset", &name, "Human36M | MuCo | MuPoTS | MSCOCO | MPII | PW3D"),
        RN_FLAG_STR("--data-dir", &data, "data dir laid out as the authors' data/"),
        RN_FLAG_STR("--split", &split, "train | test (default train)"),
        RN_FLAG_RANGE("--protocol", &protocol, 1, 2, "Human3.6M protocol 1 or 2 (default 2)"),
        RN_FLAG_BOOL("--det-bbox", &det, "detector boxes (MuPoTS, Human3.6M test)"),
        RN_FLAG_RANGE("--input-size", &input_size, 32, 2048, "network input size, square, a multiple of 32 (default 256)"),
        RN_FLAG_BOOL("--no-cache", &no_cache, "parse the JSON, never use the cache"),
        RN_FLAG_STR("--cache-dir", &cache_dir, "cache folder, created if missing (default data/<name>/, or the per-user cache when that is not writable)"),
        RN_FLAG_STR("--dump", &dump, "write every record as CSV to this file"),
        RN_FLAG_STR("--joints", &joints, "write every record's joints as float32 .npy (N, J, 7): img x, y, depth - "
                    "root depth, cam X, Y, Z, vis, as the authors' PoseNet readers"),
        RN_FLAG_STR("--prepare", &prep_dir, "prepare every JPEG frame into this folder (train --prep-dir DIR reads it): "
                    "exact pixels, each crop entropy-decoded alone; rebuilt where a source changed"),
        RN_FLAG_ALIAS("--name", "--dataset"),
        RN_FLAG_ALIAS("--data", "--data-dir"),
        {0}};
    const char *synopsis = "--dataset SET --data-dir DIR [--split train|test] [--dump FILE.csv]";
    int h = rn_args_handle(flags, argc, argv, synopsis);
    if (h >= 0) return h;
    if (!name || !data) return rn_args_misuse(flags, argv, synopsis, "--dataset and --data-dir are required");
    if (!rn_input_size_ok(input_size)) {
        fprintf(stderr, "rootnet dataset: --input-size %ld: must be a multiple of 32 in 32..2048\n", input_size);
        return RN_EXIT_USAGE;
    }
    if (strcmp(split, "train") && strcmp(split, "test")) {
        fprintf(stderr, "rootnet dataset: --split '%s': expected train or test\n", split);
        return RN_EXIT_USAGE;
    }
    rn_err err = {{0}};
    rn_dataset_opts o = {.protocol = (int)protocol, .use_det_bbox = det, .input_w = (int)input_size,
                         .input_h = (int)input_size, .no_cache = no_cache, .cache_dir = cache_dir, .warn = stderr};
    rn_dataset ds;
    double t0 = rn_prof_now();
    if (rn_dataset_load(&ds, name, data, strcmp(split, "train") ? RN_SPLIT_TEST : RN_SPLIT_TRAIN, &o, &err))
        return rn_cli_fail("dataset", RN_EXIT_FAIL, &err);
    double ms = 1e3 * (rn_prof_now() - t0);
    printf("%s %s: %zu records in %.1f ms; cache: %s\n", name, split, ds.n, ms, ds.cache_note);
    printf("%s %s: images are read as stored, EXIF orientation ignored (as the authors' loader: cv2 "
           "IMREAD_IGNORE_ORIENTATION); predict and demo apply it\n", name, split);
    int rc = dump && dump_csv(&ds, dump, &err) ? rn_cli_fail("dataset", RN_EXIT_FAIL, &err) : RN_EXIT_OK;
    if (!rc && joints && dump_joints(&ds, joints, &err)) rc = rn_cli_fail("dataset", RN_EXIT_FAIL, &err);
    if (!rc && prep_dir) rc = prepare(&ds, prep_dir);
    rn_dataset_free(&ds);
    return rc;
}
