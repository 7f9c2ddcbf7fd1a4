#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "data/cache.h"
#include "data/readers.h"
#include "data/sample.h"

typedef int (*reader_fn)(rn_dsbuild *, const rn_read_ctx *, rn_err *);

static reader_fn find_reader(const char *name)
{
    static const struct {
        const char *name;
        reader_fn fn;
    } T[] = {{"Human36M", rn_read_human36m}, {"MuCo", rn_read_muco},   {"MuPoTS", rn_read_mupots},
             {"MSCOCO", rn_read_mscoco},     {"MPII", rn_read_mpii}, {"PW3D", rn_read_pw3d}};
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
        if (!strcmp(T[i].name, name)) return T[i].fn;
    return NULL;
}

static rn_dataset_opts defaulted(const rn_dataset_opts *o)
{
    rn_dataset_opts d = {.protocol = 2, .input_w = 256, .input_h = 256};
    if (o) d = *o;
    if (d.protocol != 1) d.protocol = 2;
    if (d.input_w <= 0) d.input_w = 256;
    if (d.input_h <= 0) d.input_h = 256;
    d.use_det_bbox = d.use_det_bbox ? 1 : 0;
    return d;
}

void rn_dataset_cache_path(char *buf, size_t len, const char *name, const char *data_dir, rn_split split,
                           const rn_dataset_opts *opts)
{
    rn_dataset_opts o = defaulted(opts);
    char dir[4096];
    if (o.cache_dir) snprintf(dir, sizeof dir, "%s", o.cache_dir);
    else snprintf(dir, sizeof dir, "%s/%s", data_dir, name);
    snprintf(buf, len, "%s/%s_%s_p%d_det%d_%dx%d.rncache", dir, name, split == RN_SPLIT_TRAIN ? "train" : "test",
             o.protocol, o.use_det_bbox, o.input_w, o.input_h);
}

static void take_build(rn_dataset *ds, rn_dsbuild *b)
{
    size_t ss = b->n * sizeof(rn_sample), len = b->str_len ? b->str_len : 1;
    char *block = rn_xmalloc(ss + len);
    if (ss) memcpy(block, b->s, ss);
    if (b->str_len) memcpy(block + ss, b->str, b->str_len);
    else block[ss] = '\0';
    ds->owned = block;
    ds->samples = (rn_sample *)block;
    ds->n = b->n;
    ds->strings = block + ss;
    ds->strings_len = len;
    rn_dsbuild_free(b);
}

static int build_key(rn_cache_key *key, const char *name, const rn_read_ctx *ctx, rn_err *err)
{
    char(*paths)[4096] = rn_xmalloc(RN_CACHE_MAX_SOURCES * sizeof *paths);
    int n = rn_read_sources(name, ctx, paths, RN_CACHE_MAX_SOURCES, err);
    rn_cache_key_init(key, name, ctx->split, ctx->opts, ctx->bbox_real);
    for (int i = 0; i < n; i++)
        if (rn_cache_key_add_source(key, paths[i], err)) n = -1;
    free(paths);
    return n < 0 ? -1 : 0;
}

static void parse_and_cache(rn_dataset *ds, rn_dsbuild *b, const rn_cache_key *key, const char *cpath,
                            const char *why)
{
    rn_err werr = {{0}};
    if (rn_cache_write(cpath, key, b->s, b->n, b->str, b->str_len, &werr))
        snprintf(ds->cache_note, sizeof ds->cache_note, "miss (%.90s), not written: %.200s", why, werr.msg);
    else
        snprintf(ds->cache_note, sizeof ds->cache_note, "miss (%.90s), wrote %.200s", why, cpath);
}

int rn_dataset_load(rn_dataset *ds, const char *name, const char *data_dir, rn_split split,
                    const rn_dataset_opts *opts, rn_err *err)
{
    memset(ds, 0, sizeof *ds);
    reader_fn fn = find_reader(name);
    if (!fn) return rn_err_set(err, "unknown dataset '%s' (Human36M, MuCo, MuPoTS, MSCOCO, MPII, PW3D)", name);
    rn_dataset_opts o = defaulted(opts);
    snprintf(ds->name, sizeof ds->name, "%s", name);
    snprintf(ds->data_dir, sizeof ds->data_dir, "%s", data_dir);
    rn_read_bbox_real(name, ds->bbox_real);
    rn_read_ctx ctx = {.data_dir = data_dir, .split = split, .opts = &o};
    memcpy(ctx.bbox_real, ds->bbox_real, sizeof ctx.bbox_real);
    rn_cache_key key;
    if (build_key(&key, name, &ctx, err)) return -1;
    char cpath[4608], why[128] = "disabled";
    rn_dataset_cache_path(cpath, sizeof cpath, name, data_dir, split, &o);
    if (!o.no_cache && rn_cache_open(ds, cpath, &key, why) == 0) {
        snprintf(ds->cache_note, sizeof ds->cache_note, "hit %.300s", cpath);
        return 0;
    }
    rn_dsbuild b = {0};
    if (fn(&b, &ctx, err)) {
        rn_dsbuild_free(&b);
        return -1;
    }
    if (!o.no_cache) parse_and_cache(ds, &b, &key, cpath, why);
    else snprintf(ds->cache_note, sizeof ds->cache_note, "cache disabled");
    take_build(ds, &b);
    return 0;
}

void rn_dataset_free(rn_dataset *ds)
{
    if (ds->mapping) munmap(ds->mapping, ds->mapping_len);
    free(ds->owned);
    memset(ds, 0, sizeof *ds);
}

const char *rn_dataset_image_path(const rn_dataset *ds, const rn_sample *s, char *buf, size_t len)
{
    RN_ASSERT(s->path_off < ds->strings_len);
    snprintf(buf, len, "%s/%s", ds->data_dir, ds->strings + s->path_off);
    return buf;
}
