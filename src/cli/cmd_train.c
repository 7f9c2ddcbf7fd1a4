/* rootnet train: flags and/or a config file -> rn_trainer_run. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/dist_cli.h"
#include "cli/exit.h"
#include "cli/train_run.h"
#include "cli/tuning_flags.h"

/* The flag table: --config, one flag per config key (typed, so the parser
 * checks numbers and int ranges; the value is then set from its text), the
 * aliases, --no-augment. Sized from the key list, so no key can be dropped. */
typedef struct train_flags {
    rn_flag *f;
    long *num;
    double *dbl;
    int *on;
    const char *config, *str;
    int no_augment;
    int n;
    char precision_help[256]; /* --precision: what the devices built in run */
} train_flags;

static const rn_flag ALIASES[] = {RN_FLAG_ALIAS("--data", "--data-dir")};
#define N_ALIASES ((int)(sizeof ALIASES / sizeof ALIASES[0]))
/* Test and debug keys: accepted (and config keys), not listed by --help. */
static const char *const HIDDEN[] = {"--dump-batches", "--kill-at-iter", "--kill-in-snapshot"};
#define N_HIDDEN ((int)(sizeof HIDDEN / sizeof HIDDEN[0]))

static rn_flag key_flag(const rn_train_key *k, train_flags *tf, int n)
{
    rn_flag f;
    switch (k->kind) {
    case RN_TK_BOOL: f = (rn_flag)RN_FLAG_BOOL(k->flag, &tf->on[n], k->help); break;
    case RN_TK_INT: f = (rn_flag)RN_FLAG_RANGE(k->flag, &tf->num[n], INT_MIN, INT_MAX, k->help); break;
    case RN_TK_I64: f = (rn_flag)RN_FLAG_I64(k->flag, &tf->num[n], k->help); break;
    case RN_TK_F64: f = (rn_flag)RN_FLAG_F64(k->flag, &tf->dbl[n], k->help); break;
    default: f = (rn_flag)RN_FLAG_STR(k->flag, &tf->str, k->help); break;
    }
    for (int i = 0; i < N_HIDDEN; i++) f.hidden |= !strcmp(k->flag, HIDDEN[i]);
    if (!strcmp(k->flag, "--precision")) f.help = tf->precision_help;
    return f;
}

static void build_flags(train_flags *tf)
{
    int keys = 0;
    while (rn_train_key_at(keys)) keys++;
    int cap = keys + N_ALIASES + 3; /* + --config, --no-augment, the terminator */
    *tf = (train_flags){.f = rn_xcalloc((size_t)cap, sizeof *tf->f), .num = rn_xcalloc((size_t)cap, sizeof(long)),
                        .dbl = rn_xcalloc((size_t)cap, sizeof(double)), .on = rn_xcalloc((size_t)cap, sizeof(int))};
    rn_cli_precision_help(tf->precision_help, sizeof tf->precision_help);
    int n = 0;
    tf->f[n++] = (rn_flag)RN_FLAG_STR("--config", &tf->config, "key = value config file (keys as the flags, see below)");
    for (int i = 0; i < keys; i++) {
        const rn_train_key *k = rn_train_key_at(i);
        if (strcmp(k->flag, "--augment")) tf->f[n] = key_flag(k, tf, n), n++;
    }
    tf->f[n++] = (rn_flag)RN_FLAG_BOOL("--no-augment", &tf->no_augment, "no augmentation (config key: augment = false)");
    for (int i = 0; i < N_ALIASES; i++) tf->f[n++] = ALIASES[i];
    int hidden = 0;
    for (int i = 0; i < n; i++) hidden += tf->f[i].hidden;
    RN_ASSERT(n < cap && hidden == N_HIDDEN); /* every key has its flag; every HIDDEN name is a key */
    tf->n = n;
}

static void free_flags(train_flags *tf) { free(tf->f), free(tf->num), free(tf->dbl), free(tf->on); }

/* Flags given on the command line, over whatever the config file set. */
static int apply_flags(rn_train_cfg *c, const train_flags *tf, rn_err *err)
{
    for (int i = 1; i < tf->n; i++) {
        const rn_flag *f = &tf->f[i];
        if (!f->seen) continue;
        if (!strcmp(f->name, "--no-augment")) {
            c->augment = !tf->no_augment;
            continue;
        }
        const char *v = f->kind == RN_ARG_BOOL ? (tf->on[i] ? "true" : "false") : f->raw;
        if (rn_train_cfg_set(c, f->name, v, err)) return -1;
    }
    return 0;
}

static int value_error(const rn_err *err) { return rn_cli_fail("train", RN_EXIT_USAGE, err); }

static int check_paths(const rn_train_cfg *c, rn_err *err)
{
    struct stat sb;
    if (stat(c->data_dir, &sb) || !S_ISDIR(sb.st_mode))
        return rn_err_set(err, "--data-dir %s: no such directory", c->data_dir);
    if (c->pretrained[0] && (stat(c->pretrained, &sb) || !S_ISREG(sb.st_mode)))
        return rn_err_set(err, "--pretrained %s: no such file", c->pretrained);
    if (c->dump_batches[0] && (stat(c->dump_batches, &sb) || !S_ISDIR(sb.st_mode)))
        return rn_err_set(err, "--dump-batches %s: no such directory", c->dump_batches);
    return 0;
}

int rn_cmd_train(int argc, char **argv)
{
    static const char *syn = "--data-dir D [--trainset-3d MuCo] [--trainset-2d MSCOCO,MPII] [--backbone 50] "
                             "[--end-epoch 20] [--batch 32] [--output DIR] [--continue] [--config FILE] ...   "
                             "(mpirun -np K rootnet train ...: data parallel, --batch per rank)";
    train_flags tf;
    build_flags(&tf);
    int rc = rn_args_handle(tf.f, argc, argv, syn);
    if (rc >= 0) {
        free_flags(&tf);
        return rc;
    }
    rc = 0;
    rn_train_cfg cfg;
    rn_train_cfg_default(&cfg);
    rn_err err = {{0}};
    if ((tf.config && rn_train_cfg_load(&cfg, tf.config, stderr, &err)) || apply_flags(&cfg, &tf, &err))
        rc = value_error(&err);
    else if (!cfg.data_dir[0])
        rc = rn_args_misuse(tf.f, argv, syn, "--data-dir is required (a flag or the config key data_dir)");
    else if (rn_train_cfg_check(&cfg, &err))
        rc = value_error(&err);
    else if (check_paths(&cfg, &err))
        rc = rn_cli_fail("train", RN_EXIT_FAIL, &err);
    rn_dist *d = NULL;
    if (!rc && rn_cli_dist_start(&d, "train", cfg.sync_bn, cfg.dist_timeout)) rc = RN_EXIT_FAIL;
    char dev[sizeof cfg.device];
    if (!rc) snprintf(cfg.device, sizeof cfg.device, "%s", rn_cli_dist_device(d, cfg.device, dev, sizeof dev));
    if (!rc) {
        int r = rn_train_run_parts(&cfg, d, stdout, &err);
        if (r && rn_dist_size(d) > 1) rn_cli_dist_fail(d, "train", RN_EXIT_FAIL, &err); /* ends the whole job */
        rn_dist_finalize(d);
        rc = r == -2 ? value_error(&err) : r ? rn_cli_fail("train", RN_EXIT_FAIL, &err) : RN_EXIT_OK;
    }
    free_flags(&tf);
    return rc;
}
