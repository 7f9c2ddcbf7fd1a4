/* The datasets, one descriptor each, in one table (descriptor.c): what the program knows of a
 * set by its name. The readers, the cache, training's set checks, test, evaluate and the
 * per-epoch metric look a set up here instead of spelling its name, files or rules again.
 * Adding a set: its reader (read_*.c, declared in readers.h), one row of the table, a fuzz
 * target (tests/fuzz), and an rn_eval_kind where it brings an evaluation of its own.
 *
 *   const rn_set_desc *d = rn_set_find("MuPoTS");             // NULL: no such set
 *   if (d && (d->roles & RN_SET_TEST)) ... d->metric ...
 *   char names[128];
 *   rn_set_names(names, sizeof names, RN_SET_TEST, " or ");   // "Human36M, MuPoTS or PW3D"
 */
#ifndef RN_DATA_SETS_DESCRIPTOR_H
#define RN_DATA_SETS_DESCRIPTOR_H

#include <stddef.h>

#include "core/status.h"

/* What a set is used for (bits): the 3D or a 2D training set of train, or a test set
 * (test, evaluate, train's --testset). */
typedef enum { RN_SET_TRAIN_3D = 1, RN_SET_TRAIN_2D = 2, RN_SET_TEST = 4, RN_SET_ANY = 7 } rn_set_role;
/* What evaluating a test set reports: AP_root (0-1) or MRPE (mm). */
typedef enum { RN_SET_NO_METRIC = 0, RN_SET_AP_ROOT, RN_SET_MRPE } rn_set_metric;

struct rn_dsbuild;
struct rn_read_ctx;
typedef int (*rn_set_reader)(struct rn_dsbuild *b, const struct rn_read_ctx *ctx, rn_err *err);
/* Appends a split's annotation files (full paths under ctx->data_dir) to paths[*n ..], at most max in all. */
typedef void (*rn_set_files)(char paths[][4096], int *n, int max, const struct rn_read_ctx *ctx);

typedef struct rn_set_desc {
    const char *name;        /* --dataset spelling, its folder under the data dir, the cache's file name */
    const char *alias;       /* another spelling test and evaluate accept ("3DPW"), or NULL */
    rn_set_reader read;      /* the authors' load_data (readers.h) */
    const char *train, *test; /* each split's annotation file under the data dir; NULL: no such split */
    rn_set_files files;      /* instead of train/test: the split's files (Human36M's, per subject), or NULL */
    const char *det;         /* the authors' detector boxes of the test split (--det-bbox), or NULL: none */
    int metres;              /* world unit metres (3DPW), else mm: bbox_real is 2 m, else 2000 mm */
    unsigned roles;          /* rn_set_role bits */
    int eval;                /* a test set's rn_eval_kind (eval/metrics.h); -1 for the others */
    rn_set_metric metric;    /* a test set's metric */
} rn_set_desc;

/* The set named name (exactly; the alias is not a name here), or NULL. */
const rn_set_desc *rn_set_find(const char *name);
/* The test set named name or alias, or NULL. */
const rn_set_desc *rn_set_find_test(const char *name);
/* The sets, in the table's order: i in 0 .. rn_set_count() - 1. */
int rn_set_count(void);
const rn_set_desc *rn_set_at(int i);
/* 1 when name is a set with one of the roles. */
int rn_set_has_role(const char *name, unsigned roles);
/* The names of the sets with one of the roles, in the table's order, joined by ", " and the last
 * pair by last ("Human36M, MuPoTS or PW3D"); returns buf. */
const char *rn_set_names(char *buf, size_t len, unsigned roles, const char *last);
/* The set's bbox_real (the authors' depth normalisation: 2000 mm, or 2 m). */
void rn_set_bbox_real(const rn_set_desc *d, float out[2]);
/* The annotation files ctx->split reads (with --det-bbox on a test split, the detector boxes
 * last), as full paths, for the cache's validation. Returns the count (<= max), or -1 with err
 * for a split the authors' set does not have. */
int rn_set_sources(const rn_set_desc *d, const struct rn_read_ctx *ctx, char paths[][4096], int max, rn_err *err);

#endif
