/* Shared by the dataset-reader targets (fuzz_h36m.c, fuzz_muco.c, ...): the
 * input is one option byte followed by the set's annotation files, separated
 * by NUL bytes (JSON holds none), in the order of the target's file list; the
 * reader opens them from memory through rn_read_ctx.open_json.
 *
 *   option byte: bit 0 test split, bit 1 protocol 1 (Human36M), bit 2 detector boxes
 *
 * Every record a reader keeps must be usable: finite numbers, a positive box
 * and k, an image path inside the string pool.
 */
#ifndef RN_TESTS_FUZZ_READER_H
#define RN_TESTS_FUZZ_READER_H

#include <math.h>

#include "data/sets/readers.h"
#include "fuzz.h"

#define FUZZ_MAX_FILES 4

typedef struct fuzz_files {
    const char *const *suffix; /* a path ending in suffix[i] gets part i */
    int n;
    const char *part[FUZZ_MAX_FILES];
    size_t len[FUZZ_MAX_FILES];
} fuzz_files;

static rn_jdoc *fuzz_open_json(void *arg, const char *path, rn_err *err)
{
    const fuzz_files *f = arg;
    size_t pl = strlen(path);
    for (int i = 0; i < f->n; i++) {
        size_t sl = strlen(f->suffix[i]);
        if (pl >= sl && !strcmp(path + pl - sl, f->suffix[i]))
            return rn_jdoc_parse(f->part[i] ? f->part[i] : "", f->len[i], path, err);
    }
    rn_err_set(err, "%s: No such file or directory", path);
    return NULL;
}

static int fuzz_finite(const float *v, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

static void fuzz_check_sample(const rn_sample *s, const rn_dsbuild *b)
{
    RN_ASSERT(s->path_off < b->str_len);
    RN_ASSERT(s->width > 0 && s->height > 0);
    RN_ASSERT(fuzz_finite(s->bbox, 4) && s->bbox[2] > 0 && s->bbox[3] > 0);
    RN_ASSERT(isfinite(s->area) && isfinite(s->k) && s->k > 0);
    RN_ASSERT(fuzz_finite(s->root_img, 3) && fuzz_finite(s->root_cam, 3) && fuzz_finite(s->f, 2) &&
              fuzz_finite(s->c, 2) && isfinite(s->score) && isfinite(s->root_vis));
}

/* The descriptor of the set that read reads. */
static const rn_set_desc *fuzz_set_of(rn_set_reader read)
{
    for (int i = 0; i < rn_set_count(); i++)
        if (rn_set_at(i)->read == read) return rn_set_at(i);
    RN_ASSERT(0 && "a reader without a set");
    return NULL;
}

static int fuzz_reader(rn_set_reader read, const char *const *suffix, int n_files, const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const rn_set_desc *set = fuzz_set_of(read);
    fuzz_files f = {.suffix = suffix, .n = n_files};
    const char *p = (const char *)data + 1, *end = (const char *)data + size;
    for (int i = 0; i < n_files && p <= end; i++) {
        const char *nul = memchr(p, '\0', (size_t)(end - p));
        f.part[i] = p;
        f.len[i] = (size_t)((nul ? nul : end) - p);
        p += f.len[i] + 1;
    }
    rn_dataset_opts opts = {.protocol = data[0] & 2 ? 1 : 2, .use_det_bbox = (data[0] >> 2) & 1,
                            .input_w = 256, .input_h = 256, .no_cache = 1};
    rn_read_ctx ctx = {.data_dir = "data", .split = data[0] & 1 ? RN_SPLIT_TEST : RN_SPLIT_TRAIN, .opts = &opts,
                       .set = set, .open_json = fuzz_open_json, .open_arg = &f};
    rn_set_bbox_real(set, ctx.bbox_real);
    rn_dsbuild b = {0};
    rn_err err = {{0}};
    int rc = read(&b, &ctx, &err);
    fuzz_check_err(rc, &err);
    if (!rc)
        for (size_t i = 0; i < b.n; i++) {
            fuzz_check_sample(&b.s[i], &b);
            /* every record's joints are finite (PW3D has none) */
            RN_ASSERT(b.J == 0 || fuzz_finite(b.joints + i * (size_t)b.J * RN_JOINT_F, b.J * RN_JOINT_F));
        }
    rn_dsbuild_free(&b);
    return 0;
}

#endif
