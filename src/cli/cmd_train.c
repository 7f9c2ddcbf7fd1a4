/* rootnet train: flags and/or a config file -> rn_trainer_run. */
#include <string.h>
#include <sys/stat.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/dist_cli.h"
#include "cli/train_run.h"
#include "train/train_dist.h"

#define MAX_FLAGS 48

typedef struct train_flags {
    rn_flag f[MAX_FLAGS];
    const char *str[MAX_FLAGS];
    int on[MAX_FLAGS];
    const char *config;
    int no_augment;
    int n;
} train_flags;

static void build_flags(train_flags *tf)
{
    memset(tf, 0, sizeof *tf);
    int n = 0;
    tf->f[n++] = (rn_flag)RN_FLAG_STR("--config", &tf->config, "key = value config file (keys as the flags, see below)");
    for (int i = 0; rn_train_key_at(i) && n < MAX_FLAGS - 3; i++) {
        const rn_train_key *k = rn_train_key_at(i);
        if (!strcmp(k->flag, "--augment")) continue;
        tf->f[n] = k->kind == RN_TK_BOOL ? (rn_flag)RN_FLAG_BOOL(k->flag, &tf->on[n], k->help)
                                         : (rn_flag)RN_FLAG_STR(k->flag, &tf->str[n], k->help);
        n++;
    }
    tf->f[n++] = (rn_flag)RN_FLAG_BOOL("--no-augment", &tf->no_augment, "no augmentation (config key: augment = false)");
    tf->n = n;
}

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
        const char *v = f->kind == RN_ARG_BOOL ? (tf->on[i] ? "true" : "false") : tf->str[i];
        if (rn_train_cfg_set(c, f->name, v, err)) return -1;
    }
    return 0;
}

static int usage_error(const char *msg, const train_flags *tf, const char *syn)
{
    fprintf(stderr, "rootnet train: %s\n", msg);
    rn_args_usage(stderr, "train", syn, tf->f);
    return 2;
}

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
    train_flags *tf = rn_xmalloc(sizeof *tf);
    build_flags(tf);
    int h = rn_args_handle(tf->f, argc, argv, syn);
    if (h >= 0) {
        free(tf);
        return h;
    }
    rn_train_cfg cfg;
    rn_train_cfg_default(&cfg);
    rn_err err = {{0}};
    int rc = 0;
    if ((tf->config && rn_train_cfg_load(&cfg, tf->config, stderr, &err)) || apply_flags(&cfg, tf, &err) ||
        rn_train_cfg_check(&cfg, &err) || check_paths(&cfg, &err))
        rc = usage_error(err.msg, tf, syn);
    rn_dist *d = NULL;
    if (!rc && rn_cli_dist_start(&d, "train", cfg.sync_bn, cfg.dist_timeout)) rc = 1;
    if (!rc) {
        rn_train_dist td;
        rn_train_hooks dist = rn_train_dist_hooks(&td, d, &cfg);
        int r = rn_train_run_parts(&cfg, &dist, &td, stdout, &err);
        if (r && rn_dist_size(d) > 1) rn_cli_dist_fail(d, "train", &err); /* ends the whole job */
        rn_dist_finalize(d);
        rc = r == -2 ? usage_error(err.msg, tf, syn) : r ? (fprintf(stderr, "rootnet train: %s\n", err.msg), 1) : 0;
    }
    free(tf);
    return rc;
}
