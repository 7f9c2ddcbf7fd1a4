/* rn_profile: a span recorder for one thread (the training thread), written
 * out as Chrome-trace JSON (chrome://tracing, ui.perfetto.dev) and summarised
 * as a per-layer table.
 *
 *   rn_profile pr;
 *   rn_profile_init(&pr, 1 << 16);                   // all spans preallocated here
 *   int s = rn_prof_begin(&pr, "forward", "step", 0); // NULL profile: no-op, returns -1
 *   ... rn_prof_begin/end nest inside ...
 *   rn_prof_end(&pr, s);
 *   rn_profile_step_done(&pr);                       // marks a step boundary
 *   rn_profile_write_chrome(&pr, "trace.json", &err); // atomic
 *   rn_profile_table(&pr, stdout);                   // per layer: ms, GFLOP/s, % of step
 *   rn_profile_free(&pr);
 *
 * Names and categories are borrowed, not copied: they must outlive the
 * profile's output calls (string literals, or the names of the parameter
 * table and the model's blocks: write the trace before destroying them). Begin and end
 * allocate nothing; spans past the capacity are dropped and counted.
 * Categories: "step" for the top level of a training step (data, forward,
 * backward, loss_scale, optimizer, sync_weights); "fwd", "bwd", "bwd_data"
 * for one layer's forward, backward (BN + weight gradient) and backward-data.
 */
#ifndef RN_CORE_PROFILE_H
#define RN_CORE_PROFILE_H

#include <stddef.h>
#include <stdio.h>

#include "core/status.h"

typedef struct rn_prof_span {
    const char *name, *cat;
    double t0, t1; /* seconds since the profile's origin */
    double flops;  /* floating-point operations of the span's main op, 0 if none */
    int depth;     /* nesting level, 0 at the top */
    int step;      /* index of the step it belongs to */
    int e0, e1;    /* device clock slots of its begin and end (-1: timed on the host) */
} rn_prof_span;

/* A device's clock (optional, rn_profile_set_clock): the layer spans (every category but
 * "step") are then timed on the device, and nothing waits for the device while they are
 * recorded. mark() records a timestamp after the work issued so far and returns its slot (-1
 * when none is left); seconds(a, b) waits for slot b and returns the seconds from slot a to b;
 * restart() frees every slot. rn_profile_step_done resolves the step's device spans: each is
 * placed on the host timeline at the host time of the step's first device span plus its
 * device offset from it. */
typedef struct rn_prof_clock {
    void *ctx;
    int (*mark)(void *ctx);
    double (*seconds)(void *ctx, int a, int b);
    void (*restart)(void *ctx);
} rn_prof_clock;

typedef struct rn_profile {
    rn_prof_span *s;
    size_t n, cap;
    long dropped;
    int depth, steps;
    double origin;
    rn_prof_clock clock; /* clock.mark NULL: every span on the host clock */
    size_t step_first;   /* the first span of the current step */
} rn_profile;

void rn_profile_init(rn_profile *p, size_t cap);
void rn_profile_free(rn_profile *p);
/* Drops every span recorded so far (e.g. after warm-up steps). */
void rn_profile_reset(rn_profile *p);
/* Seconds on the monotonic clock: the one clock every timing of the program reads. */
double rn_prof_now(void);
int rn_prof_begin(rn_profile *p, const char *name, const char *cat, double flops);
void rn_prof_end(rn_profile *p, int span);
void rn_profile_step_done(rn_profile *p);
/* Times the layer spans on a device from now on (see rn_prof_clock). */
void rn_profile_set_clock(rn_profile *p, const rn_prof_clock *c);
/* 1 if p times layer spans on a device clock (so a span's end need not wait for the device). */
int rn_profile_device_timed(const rn_profile *p);

/* Sum of the durations of top-level spans (depth 0), and of leaf spans
 * (spans containing no other span), over all recorded steps, in seconds. */
double rn_profile_top_seconds(const rn_profile *p);
double rn_profile_leaf_seconds(const rn_profile *p);
int rn_profile_write_chrome(const rn_profile *p, const char *path, rn_err *err);
/* Per-name table over the leaf spans, averaged per step. */
void rn_profile_table(const rn_profile *p, FILE *f);

#endif
