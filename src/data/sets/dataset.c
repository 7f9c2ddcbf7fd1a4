#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "data/sets/cache.h"
#include "data/sets/readers.h"
#include "data/sets/sample.h"
#include "io/file.h"

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

static void cache_file(char *buf, size_t len, const char *dir, const char *name, rn_split split,
                       const rn_dataset_opts *o)
{
    snprintf(buf, len, "%s/%s_%s_p%d_det%d_%dx%d.rncache", dir, name, split == RN_SPLIT_TRAIN ? "train" : "test",
             o->protocol, o->use_det_bbox, o->input_w, o->input_h);
}

void rn_dataset_cache_path(char *buf, size_t len, const char *name, const char *data_dir, rn_split split,
                           const rn_dataset_opts *opts)
{
    rn_dataset_opts o = defaulted(opts);
    char dir[4096];
    if (o.cache_dir) snprintf(dir, sizeof dir, "%s", o.cache_dir);
    else snprintf(dir, sizeof dir, "%s/%s", data_dir, name);
    cache_file(buf, len, dir, name, split, &o);
}

/* The per-user cache folder of data_dir: $XDG_CACHE_HOME/rootnet/<h>, else
 * $HOME/.cache/rootnet/<h>, <h> the hash of data_dir's real path (two data
 * folders never share a file). 0, or -1 when neither variable is set. */
static int user_cache_dir(char *buf, size_t len, const char *data_dir)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char real[PATH_MAX];
    if (!realpath(data_dir, real)) snprintf(real, sizeof real, "%s", data_dir);
    uint64_t h = rn_hash64(real, strlen(real), 0);
    if (xdg && xdg[0] == '/') snprintf(buf, len, "%s/rootnet/%016" PRIx64, xdg, h);
    else if (home && home[0]) snprintf(buf, len, "%s/.cache/rootnet/%016" PRIx64, home, h);
    else return -1;
    return 0;
}

/* Moves a reader's output into ds: records, then joints (float-aligned), then strings in one block. */
static void take_build(rn_dataset *ds, rn_dsbuild *b)
{
    int J = b->J > 0 && b->skeleton ? b->J : 0;
    size_t ss = b->n * sizeof(rn_sample), js = b->n * (size_t)J * RN_JOINT_F * sizeof(float);
    size_t len = b->str_len ? b->str_len : 1;
    char *block = rn_xmalloc(ss + js + len);
    if (ss) memcpy(block, b->s, ss);
    if (js) memcpy(block + ss, b->joints, js);
    if (b->str_len) memcpy(block + ss + js, b->str, b->str_len);
    else block[ss + js] = '\0';
    ds->owned = block;
    ds->samples = (rn_sample *)block;
    ds->n = b->n;
    ds->J = J;
    ds->joints = J ? (float *)(block + ss) : NULL;
    snprintf(ds->skeleton, sizeof ds->skeleton, "%s", J ? b->skeleton : "");
    ds->strings = block + ss + js;
    ds->strings_len = len;
    rn_dsbuild_free(b);
}

static rn_cache_payload payload_of(const rn_dsbuild *b)
{
    return (rn_cache_payload){.s = b->s, .n = b->n, .strings = b->str, .strings_len = b->str_len, .J = b->J,
                              .skeleton = b->skeleton, .joints = b->joints};
}

static int build_key(rn_cache_key *key, const rn_read_ctx *ctx, rn_err *err)
{
    char(*paths)[4096] = rn_xmalloc(RN_CACHE_MAX_SOURCES * sizeof *paths);
    int n = rn_set_sources(ctx->set, ctx, paths, RN_CACHE_MAX_SOURCES, err);
    rn_cache_key_init(key, ctx->set->name, ctx->split, ctx->opts, ctx->bbox_real);
    for (int i = 0; i < n; i++)
        if (rn_cache_key_add_source(key, paths[i], err)) n = -1;
    free(paths);
    return n < 0 ? -1 : 0;
}

/* Where the cache is looked for and written: the primary path, and the
 * per-user one (user_dir[0] == 0 when there is none: --cache-dir given, or no
 * HOME). */
typedef struct cache_place {
    char path[4608], user_dir[4096], user_path[4608];
} cache_place;

static int place_cache(cache_place *cp, const char *name, const char *data_dir, rn_split split,
                       const rn_dataset_opts *o, rn_err *err)
{
    rn_dataset_cache_path(cp->path, sizeof cp->path, name, data_dir, split, o);
    cp->user_dir[0] = cp->user_path[0] = 0;
    if (o->cache_dir) return rn_mkdirs(o->cache_dir, err) ? rn_err_prefix(err, "cache folder") : 0;
    if (!user_cache_dir(cp->user_dir, sizeof cp->user_dir, data_dir))
        cache_file(cp->user_path, sizeof cp->user_path, cp->user_dir, name, split, o);
    return 0;
}

/* Writes the cache at its primary path, else (say so on warn) in the per-user folder. */
static void parse_and_cache(rn_dataset *ds, rn_dsbuild *b, const rn_cache_key *key, const cache_place *cp,
                            const char *why, FILE *warn)
{
    rn_err werr = {{0}}, uerr = {{0}};
    rn_cache_payload pl = payload_of(b);
    if (warn && !strcmp(why, RN_CACHE_OLD_FORMAT))
        fprintf(warn, "rootnet: %s: the dataset cache %s was written by an older rootnet (without joints); "
                "rebuilding it\n", ds->name, cp->path);
    if (!rn_cache_write(cp->path, key, &pl, &werr)) {
        snprintf(ds->cache_note, sizeof ds->cache_note, "miss (%.90s), wrote %.200s", why, cp->path);
        return;
    }
    if (!cp->user_dir[0] || rn_mkdirs(cp->user_dir, &uerr) ||
        rn_cache_write(cp->user_path, key, &pl, &uerr)) {
        snprintf(ds->cache_note, sizeof ds->cache_note, "miss (%.90s), not written: %.200s", why, werr.msg);
        return;
    }
    snprintf(ds->cache_note, sizeof ds->cache_note, "miss (%.90s), wrote %.200s", why, cp->user_path);
    if (warn)
        fprintf(warn, "rootnet: %s: the dataset cache cannot be written next to the annotations (%s); using %s\n",
                ds->name, werr.msg, cp->user_path);
}

/* Runs the reader; with a cache place (cp != NULL) writes the cache there. */
static int parse_set(rn_dataset *ds, rn_set_reader fn, const rn_read_ctx *ctx, const rn_cache_key *key,
                     const cache_place *cp, const char *why, FILE *warn, rn_err *err)
{
    rn_dsbuild b = {0};
    if (fn(&b, ctx, err)) {
        rn_dsbuild_free(&b);
        return -1;
    }
    if (cp) parse_and_cache(ds, &b, key, cp, why, warn);
    else snprintf(ds->cache_note, sizeof ds->cache_note, "cache disabled");
    take_build(ds, &b);
    return 0;
}

int rn_dataset_load(rn_dataset *ds, const char *name, const char *data_dir, rn_split split,
                    const rn_dataset_opts *opts, rn_err *err)
{
    memset(ds, 0, sizeof *ds);
    const rn_set_desc *set = rn_set_find(name);
    char names[128];
    if (!set) return rn_err_set(err, "unknown dataset '%s' (%s)", name, rn_set_names(names, sizeof names, RN_SET_ANY, ", "));
    rn_set_reader fn = set->read;
    rn_dataset_opts o = defaulted(opts);
    snprintf(ds->name, sizeof ds->name, "%s", name);
    snprintf(ds->data_dir, sizeof ds->data_dir, "%s", data_dir);
    rn_set_bbox_real(set, ds->bbox_real);
    rn_read_ctx ctx = {.data_dir = data_dir, .split = split, .opts = &o, .set = set};
    memcpy(ctx.bbox_real, ds->bbox_real, sizeof ctx.bbox_real);
    rn_cache_key key;
    if (build_key(&key, &ctx, err)) return -1;
    if (o.no_cache) return parse_set(ds, fn, &ctx, NULL, NULL, "", NULL, err);
    cache_place *cp = rn_xmalloc(sizeof *cp);
    int rc = place_cache(cp, name, data_dir, split, &o, err);
    char why[128], uwhy[128];
    if (!rc && rn_cache_open(ds, cp->path, &key, why) == 0)
        snprintf(ds->cache_note, sizeof ds->cache_note, "hit %.300s", cp->path);
    else if (!rc && cp->user_path[0] && rn_cache_open(ds, cp->user_path, &key, uwhy) == 0)
        snprintf(ds->cache_note, sizeof ds->cache_note, "hit %.300s", cp->user_path);
    else if (!rc)
        rc = parse_set(ds, fn, &ctx, &key, cp, why, o.warn, err);
    free(cp);
    return rc;
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
    const char *path = ds->strings + s->path_off;
    if (ds->data_dir[0]) snprintf(buf, len, "%s/%s", ds->data_dir, path);
    else snprintf(buf, len, "%s", path);
    return buf;
}
