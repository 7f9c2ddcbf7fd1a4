/* Composite trainer hooks: each hook calls every part in turn. */
#include "train/hook_chain.h"

#include <string.h>

void rn_hook_chain_init(rn_hook_chain *ch) { memset(ch, 0, sizeof *ch); }

void rn_hook_chain_add(rn_hook_chain *ch, const rn_train_hooks *h)
{
    if (!h) return;
    RN_ASSERT(ch->n < RN_HOOK_CHAIN_MAX);
    ch->part[ch->n++] = *h;
}

static int chain_on_start(void *ctx, rn_params *p, rn_err *err)
{
    rn_hook_chain *ch = ctx;
    for (int i = 0; i < ch->n; i++)
        if (ch->part[i].on_start && ch->part[i].on_start(ch->part[i].ctx, p, err)) return -1;
    return 0;
}

static void chain_span_begin(void *ctx, const char *name)
{
    rn_hook_chain *ch = ctx;
    for (int i = 0; i < ch->n; i++)
        if (ch->part[i].span_begin) ch->part[i].span_begin(ch->part[i].ctx, name);
}

static void chain_span_end(void *ctx, const char *name)
{
    rn_hook_chain *ch = ctx;
    for (int i = ch->n - 1; i >= 0; i--)
        if (ch->part[i].span_end) ch->part[i].span_end(ch->part[i].ctx, name);
}

static int chain_on_epoch(void *ctx, int epoch, const char *snapshot, const rn_params *p, double *metric, rn_err *err)
{
    rn_hook_chain *ch = ctx;
    for (int i = 0; i < ch->n; i++)
        if (ch->part[i].on_epoch && ch->part[i].on_epoch(ch->part[i].ctx, epoch, snapshot, p, metric, err)) return -1;
    return 0;
}

static void chain_on_step(void *ctx)
{
    rn_hook_chain *ch = ctx;
    for (int i = 0; i < ch->n; i++)
        if (ch->part[i].on_step) ch->part[i].on_step(ch->part[i].ctx);
}

static int chain_log_values(void *ctx, int at_epoch, const char **name, double *value, int max)
{
    rn_hook_chain *ch = ctx;
    int n = 0;
    for (int i = 0; i < ch->n && n < max; i++)
        if (ch->part[i].log_values) n += ch->part[i].log_values(ch->part[i].ctx, at_epoch, name + n, value + n, max - n);
    return n;
}

static int chain_on_end(void *ctx, rn_err *err)
{
    rn_hook_chain *ch = ctx;
    for (int i = ch->n - 1; i >= 0; i--)
        if (ch->part[i].on_end && ch->part[i].on_end(ch->part[i].ctx, err)) return -1;
    return 0;
}

rn_train_hooks rn_hook_chain_hooks(rn_hook_chain *ch)
{
    return (rn_train_hooks){.ctx = ch,
                            .on_start = chain_on_start,
                            .span_begin = chain_span_begin,
                            .span_end = chain_span_end,
                            .on_epoch = chain_on_epoch,
                            .on_step = chain_on_step,
                            .log_values = chain_log_values,
                            .on_end = chain_on_end};
}
