#include "core/profile.h"

#include <string.h>
#include <time.h>

#include "core/afile.h"

double rn_prof_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void rn_profile_init(rn_profile *p, size_t cap)
{
    memset(p, 0, sizeof *p);
    p->cap = cap;
    p->s = rn_xmalloc((cap ? cap : 1) * sizeof *p->s);
    p->origin = rn_prof_now();
}

void rn_profile_free(rn_profile *p)
{
    free(p->s);
    memset(p, 0, sizeof *p);
}

void rn_profile_reset(rn_profile *p)
{
    if (p->clock.restart) p->clock.restart(p->clock.ctx);
    p->step_first = 0;
    p->n = 0;
    p->dropped = 0;
    p->steps = 0;
    p->depth = 0;
}

int rn_prof_begin(rn_profile *p, const char *name, const char *cat, double flops)
{
    if (!p) return -1;
    int d = p->depth++;
    if (p->n >= p->cap) {
        p->dropped++;
        return -1;
    }
    rn_prof_span *s = &p->s[p->n];
    *s = (rn_prof_span){.name = name, .cat = cat, .flops = flops, .depth = d, .step = p->steps, .e0 = -1, .e1 = -1};
    if (p->clock.mark && strcmp(cat, "step")) s->e0 = p->clock.mark(p->clock.ctx);
    s->t0 = rn_prof_now() - p->origin;
    s->t1 = s->t0;
    return (int)p->n++;
}

void rn_prof_end(rn_profile *p, int span)
{
    if (!p) return;
    p->depth--;
    if (span < 0) return;
    p->s[span].t1 = rn_prof_now() - p->origin;
    if (p->s[span].e0 >= 0) p->s[span].e1 = p->clock.mark(p->clock.ctx);
}

/* The current step's device spans onto the host timeline (one wait per span end, after the step). */
static void resolve_device_spans(rn_profile *p)
{
    rn_prof_span *first = NULL;
    for (size_t i = p->step_first; i < p->n; i++) {
        rn_prof_span *s = &p->s[i];
        if (s->e0 < 0 || s->e1 < 0) continue;
        if (!first) first = s;
        double base = first->t0;
        s->t0 = base + p->clock.seconds(p->clock.ctx, first->e0, s->e0);
        s->t1 = base + p->clock.seconds(p->clock.ctx, first->e0, s->e1);
    }
    if (p->clock.restart) p->clock.restart(p->clock.ctx);
    p->step_first = p->n;
}

void rn_profile_step_done(rn_profile *p)
{
    if (!p) return;
    if (p->clock.mark) resolve_device_spans(p);
    p->steps++;
}

void rn_profile_set_clock(rn_profile *p, const rn_prof_clock *c)
{
    p->clock = *c;
    p->step_first = p->n;
}

int rn_profile_device_timed(const rn_profile *p) { return p && p->clock.mark; }


double rn_profile_top_seconds(const rn_profile *p)
{
    double t = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->s[i].depth == 0) t += p->s[i].t1 - p->s[i].t0;
    return t;
}

/* Spans are recorded in begin order, so a span's children follow it directly. */
static int is_leaf(const rn_profile *p, size_t i) { return i + 1 >= p->n || p->s[i + 1].depth <= p->s[i].depth; }

double rn_profile_leaf_seconds(const rn_profile *p)
{
    double t = 0;
    for (size_t i = 0; i < p->n; i++)
        if (is_leaf(p, i)) t += p->s[i].t1 - p->s[i].t0;
    return t;
}

/* Writes s as a JSON string body (names here are plain ASCII; escape anyway). */
static void json_str(char *out, size_t cap, const char *s)
{
    size_t o = 0;
    for (; *s && o + 7 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') out[o++] = '\\', out[o++] = (char)c;
        else if (c < 0x20) o += (size_t)snprintf(out + o, cap - o, "\\u%04x", c);
        else out[o++] = (char)c;
    }
    out[o] = 0;
}

static int write_span(rn_afile *f, const rn_prof_span *s, int first, rn_err *err)
{
    char line[768], name[256], cat[64];
    json_str(name, sizeof name, s->name);
    json_str(cat, sizeof cat, s->cat);
    double dur = s->t1 - s->t0;
    int n = snprintf(line, sizeof line,
                     "%s{\"name\": \"%s\", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": 1, \"tid\": 1, "
                     "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"step\": %d, \"gflop\": %.6f, \"gflops\": %.3f}}",
                     first ? "" : ",\n", name, cat, s->t0 * 1e6, dur * 1e6, s->step, s->flops * 1e-9,
                     dur > 0 ? s->flops * 1e-9 / dur : 0.0);
    return rn_afile_write(f, line, (size_t)n, err);
}

int rn_profile_write_chrome(const rn_profile *p, const char *path, rn_err *err)
{
    rn_afile f;
    if (rn_afile_open(&f, path, err)) return rn_err_prefix(err, "profile");
    const char *head = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
    if (rn_afile_write(&f, head, strlen(head), err)) return -1;
    for (size_t i = 0; i < p->n; i++)
        if (write_span(&f, &p->s[i], i == 0, err)) return -1;
    char tail[160];
    int n = snprintf(tail, sizeof tail, "\n], \"otherData\": {\"steps\": %d, \"dropped_spans\": %ld}}\n", p->steps,
                     p->dropped);
    if (rn_afile_write(&f, tail, (size_t)n, err)) return -1;
    return rn_afile_commit(&f, err);
}

typedef struct row {
    const char *name;
    double fwd, bwd, other, flops; /* seconds: layer forward, layer backward, step-level work */
    size_t first; /* first occurrence, for the table order */
} row;

static row *row_find(row *rows, int *nrows, const char *name, size_t i)
{
    for (int r = 0; r < *nrows; r++)
        if (!strcmp(rows[r].name, name)) return &rows[r];
    rows[*nrows] = (row){.name = name, .first = i};
    return &rows[(*nrows)++];
}

void rn_profile_table(const rn_profile *p, FILE *f)
{
    int steps = p->steps > 0 ? p->steps : 1, nrows = 0;
    row *rows = rn_xcalloc(p->n + 1, sizeof *rows);
    double step_s = rn_profile_top_seconds(p) / steps;
    for (size_t i = 0; i < p->n; i++) {
        if (!is_leaf(p, i)) continue;
        const rn_prof_span *s = &p->s[i];
        row *r = row_find(rows, &nrows, s->name, i);
        double d = s->t1 - s->t0;
        if (!strcmp(s->cat, "fwd")) r->fwd += d;
        else if (!strcmp(s->cat, "step")) r->other += d;
        else r->bwd += d;
        r->flops += s->flops;
    }
    fprintf(f, "%-44s %9s %9s %9s %9s %7s\n", "layer", "fwd_ms", "bwd_ms", "total_ms", "GFLOP/s", "%step");
    for (int r = 0; r < nrows; r++) {
        double tot = rows[r].fwd + rows[r].bwd + rows[r].other;
        fprintf(f, "%-44.44s %9.3f %9.3f %9.3f %9.2f %7.2f\n", rows[r].name, 1e3 * rows[r].fwd / steps,
                1e3 * rows[r].bwd / steps, 1e3 * tot / steps, tot > 0 ? rows[r].flops * 1e-9 / tot : 0.0,
                step_s > 0 ? 100.0 * tot / steps / step_s : 0.0);
    }
    fprintf(f, "step %.3f ms (top-level spans), leaf spans cover %.2f%%, %d step(s), %ld span(s) dropped\n",
            1e3 * step_s, step_s > 0 ? 100.0 * rn_profile_leaf_seconds(p) / steps / step_s : 0.0, p->steps, p->dropped);
    free(rows);
}
