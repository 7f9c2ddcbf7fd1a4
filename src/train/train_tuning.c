/* rn_tuning behind the trainer's hooks. */
#include "train/train_tuning.h"

#include <string.h>

static const char *opt_str(const char *s) { return s[0] ? s : NULL; }

int rn_train_tuning_setup(rn_train_tuning *tt, const rn_train_cfg *c, int rank, FILE *out, rn_err *err)
{
    tt->main_rank = rank == 0;
    tt->out = tt->main_rank ? out : NULL;
    rn_tuning_flags f = {.device = c->device,
                         .precision = c->precision,
                         .loss_scale = opt_str(c->loss_scale),
                         .profile = tt->main_rank ? opt_str(c->profile) : NULL,
                         .autotune = opt_str(c->autotune),
                         .lr_scale = c->lr_scale,
                         .bind_cores = c->bind_cores,
                         .graph = c->graph,
                         .no_prefetch = c->no_prefetch,
                         .cudnn_benchmark = c->cudnn_benchmark,
                         .workspace_mb = c->workspace_mb};
    if (rn_tuning_setup(&tt->t, &f, rn_train_cfg_threads(c), err)) {
        rn_tuning_free(&tt->t);
        return -1;
    }
    return 0;
}

/* Snapshots are per epoch, not per step: left out of the step profile. */
static int per_step(const char *name) { return strcmp(name, "snapshot") != 0; }

static void tt_span_begin(void *ctx, const char *name)
{
    rn_train_tuning *tt = ctx;
    if (per_step(name)) rn_tuning_span_begin(&tt->t, name);
}

static void tt_span_end(void *ctx, const char *name)
{
    rn_train_tuning *tt = ctx;
    if (per_step(name)) rn_tuning_span_end(&tt->t, name);
}

static void tt_on_step(void *ctx)
{
    rn_train_tuning *tt = ctx;
    if (tt->t.prof) rn_profile_step_done(tt->t.prof);
}

static int tt_log_values(void *ctx, int at_epoch, const char **name, double *value, int max)
{
    rn_train_tuning *tt = ctx;
    if (at_epoch || !tt->t.scaling || max < 2) return 0;
    name[0] = "loss_scale", value[0] = tt->t.scaler.scale;
    name[1] = "skipped", value[1] = (double)tt->t.scaler.skipped;
    return 2;
}

static int tt_on_end(void *ctx, rn_err *err)
{
    rn_train_tuning *tt = ctx;
    if (!tt->main_rank) return 0;
    if (tt->out) return rn_tuning_finish(&tt->t, tt->out, err);
    FILE *quiet = fopen("/dev/null", "w");
    if (!quiet) return rn_err_set(err, "/dev/null: cannot open");
    int rc = rn_tuning_finish(&tt->t, quiet, err);
    fclose(quiet);
    return rc;
}

rn_train_hooks rn_train_tuning_hooks(rn_train_tuning *tt)
{
    return (rn_train_hooks){.ctx = tt,
                            .span_begin = tt_span_begin,
                            .span_end = tt_span_end,
                            .on_step = tt_on_step,
                            .log_values = tt_log_values,
                            .on_end = tt_on_end};
}

void rn_train_tuning_free(rn_train_tuning *tt) { rn_tuning_free(&tt->t); }
