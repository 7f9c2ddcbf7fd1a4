/* Binary cache of a parsed dataset: header + records + string pool in one
 * file, written atomically (temp, fsync, rename) and mmap'd on later loads.
 * A cache is used only if its magic, format version, record size, parsing
 * options and every source file's size, mtime and 64-bit content hash match,
 * and its payload hash is intact; otherwise the caller reparses. Format 3
 * adds the records' joints (n * J * RN_JOINT_F floats) after the string pool.
 *
 *   rn_cache_key key; rn_cache_key_init(&key, "MuCo", split, &opts, bbox_real);
 *   rn_cache_key_add_source(&key, path, &err);
 *   if (rn_cache_open(&ds, cache_path, &key) == 0) -> ds filled, mapped
 *   else { parse ...; rn_cache_write(cache_path, &key, &(rn_cache_payload){samples, n, strings, len, J, "MuCo", joints}, &err); }
 */
#ifndef RN_DATA_CACHE_H
#define RN_DATA_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "core/hash.h" /* rn_hash64: the cache's checksums */
#include "core/status.h"
#include "data/sets/sample.h"

#define RN_CACHE_MAX_SOURCES 32

typedef struct rn_cache_source {
    uint64_t path_hash, size, mtime_ns, content_hash;
} rn_cache_source;

/* Everything a cache must match: set, split, options, sources. */
typedef struct rn_cache_key {
    char name[32];
    int32_t split, protocol, use_det_bbox, input_w, input_h;
    float bbox_real[2];
    uint32_t n_sources;
    rn_cache_source src[RN_CACHE_MAX_SOURCES];
} rn_cache_key;

void rn_cache_key_init(rn_cache_key *k, const char *name, rn_split split, const rn_dataset_opts *o,
                       const float bbox_real[2]);
/* Stats and hashes one source file into the key; -1 with "path: cannot open" in err. */
int rn_cache_key_add_source(rn_cache_key *k, const char *path, rn_err *err);
/* What a cache holds besides its key. */
typedef struct rn_cache_payload {
    const rn_sample *s;
    size_t n;
    const char *strings;
    size_t strings_len;
    int J;                /* joints per record, 0: none */
    const char *skeleton; /* their joint set's name, NULL when J == 0 */
    const float *joints;  /* n * J * RN_JOINT_F */
} rn_cache_payload;

/* The reason rn_cache_open gives for a cache an older rootnet wrote (its format version differs). */
#define RN_CACHE_OLD_FORMAT "written by an older rootnet"

/* Maps a valid cache into ds (samples, strings, joints, mapping). Returns 0, or -1
 * (missing, stale or corrupt: the reason in why, if not NULL). */
int rn_cache_open(rn_dataset *ds, const char *path, const rn_cache_key *k, char why[128]);
/* Writes a cache atomically. Returns 0 or -1 with err. */
int rn_cache_write(const char *path, const rn_cache_key *k, const rn_cache_payload *p, rn_err *err);

#endif
