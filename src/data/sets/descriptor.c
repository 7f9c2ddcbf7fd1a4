#include "data/sets/descriptor.h"

#include <stdio.h>
#include <string.h>

#include "data/sets/readers.h"

static const rn_set_desc SETS[] = {
    {.name = "Human36M", .read = rn_read_human36m, .files = rn_read_h36m_files,
     .det = "Human36M/bbox/bbox_human36m_output.json", .roles = RN_SET_TRAIN_3D | RN_SET_TEST, .eval = 1,
     .metric = RN_SET_MRPE},
    {.name = "MuCo", .read = rn_read_muco, .train = "MuCo/data/MuCo-3DHP.json", .roles = RN_SET_TRAIN_3D, .eval = -1},
    {.name = "MuPoTS", .read = rn_read_mupots, .test = "MuPoTS/data/MuPoTS-3D.json",
     .det = "MuPoTS/bbox/bbox_mupots_output.json", .roles = RN_SET_TEST, .eval = 0, .metric = RN_SET_AP_ROOT},
    {.name = "MSCOCO", .read = rn_read_mscoco, .train = "MSCOCO/annotations/person_keypoints_train2017.json",
     .test = "MSCOCO/annotations/person_keypoints_val2017.json", .roles = RN_SET_TRAIN_2D, .eval = -1},
    {.name = "MPII", .read = rn_read_mpii, .train = "MPII/annotations/train.json", .roles = RN_SET_TRAIN_2D,
     .eval = -1},
    {.name = "PW3D", .alias = "3DPW", .read = rn_read_pw3d, .train = "PW3D/data/3DPW_train.json",
     .test = "PW3D/data/3DPW_test.json", .metres = 1, .roles = RN_SET_TEST, .eval = 2, .metric = RN_SET_MRPE},
};
enum { N_SETS = sizeof SETS / sizeof SETS[0] };

int rn_set_count(void) { return N_SETS; }

const rn_set_desc *rn_set_at(int i)
{
    RN_ASSERT(i >= 0 && i < N_SETS);
    return &SETS[i];
}

const rn_set_desc *rn_set_find(const char *name)
{
    for (int i = 0; i < N_SETS; i++)
        if (!strcmp(SETS[i].name, name)) return &SETS[i];
    return NULL;
}

const rn_set_desc *rn_set_find_test(const char *name)
{
    for (int i = 0; i < N_SETS; i++) {
        const rn_set_desc *d = &SETS[i];
        if ((d->roles & RN_SET_TEST) && (!strcmp(d->name, name) || (d->alias && !strcmp(d->alias, name)))) return d;
    }
    return NULL;
}

int rn_set_has_role(const char *name, unsigned roles)
{
    const rn_set_desc *d = rn_set_find(name);
    return d && (d->roles & roles);
}

const char *rn_set_names(char *buf, size_t len, unsigned roles, const char *last)
{
    int n = 0, k = 0;
    for (int i = 0; i < N_SETS; i++) n += !!(SETS[i].roles & roles);
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < N_SETS && at < len; i++) {
        if (!(SETS[i].roles & roles)) continue;
        const char *sep = k == 0 ? "" : k == n - 1 ? last : ", ";
        int w = snprintf(buf + at, len - at, "%s%s", sep, SETS[i].name);
        at += w > 0 ? (size_t)w : 0;
        k++;
    }
    return buf;
}

void rn_set_bbox_real(const rn_set_desc *d, float out[2]) { out[0] = out[1] = d->metres ? 2.0f : 2000.0f; }

static void add_path(char paths[][4096], int *n, int max, const rn_read_ctx *ctx, const char *rel)
{
    RN_ASSERT(*n < max);
    snprintf(paths[(*n)++], 4096, "%s/%s", ctx->data_dir, rel);
}

int rn_set_sources(const rn_set_desc *d, const rn_read_ctx *ctx, char paths[][4096], int max, rn_err *err)
{
    int n = 0, train = ctx->split == RN_SPLIT_TRAIN;
    if (d->files) d->files(paths, &n, max, ctx);
    else if (train ? d->train : d->test) add_path(paths, &n, max, ctx, train ? d->train : d->test);
    else return rn_err_set(err, "%s: the authors' %s has only a %s split", d->name, d->name, train ? "test" : "train");
    if (d->det && !train && ctx->opts->use_det_bbox) add_path(paths, &n, max, ctx, d->det);
    return n;
}
