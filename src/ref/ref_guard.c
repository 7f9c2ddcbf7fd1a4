/* The guard device ("ref-guard"), for tests: the reference device behind
 * memory the host may not touch. Each buffer is its own mmap'd pages,
 * readable and writable only while one of this device's ops runs; between ops
 * every buffer is PROT_NONE, so a host read or write through a device pointer
 * (which a CUDA device's memory would not allow either) stops the process
 * with SIGSEGV at that line. host_memory is 0, so the model, the trainer, the
 * snapshots and the distribution take their download/upload paths; every
 * number is the ref device's, bit for bit. Its ops are ref's, forwarded
 * (generated from nn/device_ops.inc: each op ref has, NULL where ref has none),
 * with its own memory and a host clock for events; it counts its waiting calls
 * and its allocs (rn_ref_guard_waits, rn_ref_guard_allocs in ref/ref.h), so
 * that a test can hold a training step to one wait and no allocation.
 *
 * Pinned host memory, as a GPU's device has it: host_alloc gives host memory the
 * guard keeps a list of, and upload_async (an upload here) takes its source from
 * that memory only (a pageable source stops the process), so that the trainer's
 * and the model's pinned paths (loader batches in it, the next batch prefetched
 * into the model's other input set) run here as they do on cuda.
 *
 * Graphs, as a GPU's stream capture has them (nn/device_ops.inc): between
 * graph_begin and graph_end each op is recorded with its arguments, not run
 * (the structs behind shape and Adam pointers copied, as a CUDA launcher reads
 * them when it is issued); graph_launch runs the record again. A waiting call,
 * an alloc or free, a conv created or destroyed, pinned memory or events made
 * or freed, or a pageable upload inside a capture (each a call CUDA forbids
 * while a stream is captured) fails graph_end with one line, and the model
 * runs without graphs. So a step replayed from a graph gives ref's numbers only if
 * everything that changes between steps is in memory, not in an argument
 * (tests/test_device_guard.c). A conv or a buffer created while a captured
 * graph lives stops the process with one line: on a GPU it may grow the
 * shared buffers (cuDNN's workspace) whose addresses the graph holds, so
 * every conv and buffer is made before the first capture.
 *
 *   rootnet step --device ref-guard ...     # as --device ref, or a segfault
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/profile.h"
#include "nn/device.h"
#include "ref/ref.h"

typedef struct region {
    void *p;
    size_t bytes;
} region;

/* A captured graph: the ops in order, each with its recorded arguments (rec_<op>). */
typedef struct gentry {
    int op;    /* RN_OP_<op> */
    void *rec; /* rec_<op> */
} gentry;

typedef struct ggraph {
    gentry *e;
    int n, cap;
    void **kept; /* copies of the structs behind pointer arguments */
    int nkept, capkept;
    char error[200]; /* the first thing that failed the capture */
} ggraph;

typedef struct guard {
    rn_device base;
    rn_device_ops ops; /* base.ops: ref's ops behind the guard, and the guard's own memory and clock */
    rn_device *ref;    /* does the work */
    region *r;         /* live buffers */
    int n, cap;
    region *pin;       /* live host_alloc blocks */
    int npin, cappin;
    long waits;        /* waiting calls so far (nn/device_ops.inc's WAIT entries) */
    long allocs;       /* alloc calls so far */
    long launches;     /* graph_launch calls so far */
    ggraph *capture;   /* the graph being captured, or NULL */
    int graphs;        /* captured graphs alive (graph_end .. graph_destroy) */
} guard;

/* Every live buffer to prot (PROT_READ | PROT_WRITE inside an op, PROT_NONE outside). */
static void protect(guard *g, int prot)
{
    for (int i = 0; i < g->n; i++) RN_ASSERT(!mprotect(g->r[i].p, g->r[i].bytes, prot));
}

/* Before one of ref's ops: the guard's buffers opened (a waiting call counted); returns ref's device. */
static rn_device *enter(rn_device *dev, int wait)
{
    guard *g = (guard *)dev;
    g->waits += wait;
    protect(g, PROT_READ | PROT_WRITE);
    return g->ref;
}

static void leave(rn_device *dev) { protect((guard *)dev, PROT_NONE); }

/* ---- capture: each op's arguments kept in a struct of its parameters ---- */

#define RG_UNPAREN(...) __VA_ARGS__
#define RG_NARG(...) RG_NARG_(__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define RG_NARG_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, N, ...) N
#define RG_CAT(a, b) RG_CAT_(a, b)
#define RG_CAT_(a, b) a##b
/* f(x) for each x of a parenthesised list (an entry's params or args): RG_EACH without separator,
 * RG_LIST with commas. */
#define RG_EACH(f, list) RG_EACH_(f, RG_UNPAREN list)
#define RG_EACH_(f, ...) RG_CAT(RG_E, RG_NARG(__VA_ARGS__))(f, __VA_ARGS__)
#define RG_E1(f, x) f(x)
#define RG_E2(f, x, ...) f(x) RG_E1(f, __VA_ARGS__)
#define RG_E3(f, x, ...) f(x) RG_E2(f, __VA_ARGS__)
#define RG_E4(f, x, ...) f(x) RG_E3(f, __VA_ARGS__)
#define RG_E5(f, x, ...) f(x) RG_E4(f, __VA_ARGS__)
#define RG_E6(f, x, ...) f(x) RG_E5(f, __VA_ARGS__)
#define RG_E7(f, x, ...) f(x) RG_E6(f, __VA_ARGS__)
#define RG_E8(f, x, ...) f(x) RG_E7(f, __VA_ARGS__)
#define RG_E9(f, x, ...) f(x) RG_E8(f, __VA_ARGS__)
#define RG_E10(f, x, ...) f(x) RG_E9(f, __VA_ARGS__)
#define RG_E11(f, x, ...) f(x) RG_E10(f, __VA_ARGS__)
#define RG_E12(f, x, ...) f(x) RG_E11(f, __VA_ARGS__)
#define RG_LIST(f, list) RG_LIST_(f, RG_UNPAREN list)
#define RG_LIST_(f, ...) RG_CAT(RG_L, RG_NARG(__VA_ARGS__))(f, __VA_ARGS__)
#define RG_L1(f, x) f(x)
#define RG_L2(f, x, ...) f(x), RG_L1(f, __VA_ARGS__)
#define RG_L3(f, x, ...) f(x), RG_L2(f, __VA_ARGS__)
#define RG_L4(f, x, ...) f(x), RG_L3(f, __VA_ARGS__)
#define RG_L5(f, x, ...) f(x), RG_L4(f, __VA_ARGS__)
#define RG_L6(f, x, ...) f(x), RG_L5(f, __VA_ARGS__)
#define RG_L7(f, x, ...) f(x), RG_L6(f, __VA_ARGS__)
#define RG_L8(f, x, ...) f(x), RG_L7(f, __VA_ARGS__)
#define RG_L9(f, x, ...) f(x), RG_L8(f, __VA_ARGS__)
#define RG_L10(f, x, ...) f(x), RG_L9(f, __VA_ARGS__)
#define RG_L11(f, x, ...) f(x), RG_L10(f, __VA_ARGS__)
#define RG_L12(f, x, ...) f(x), RG_L11(f, __VA_ARGS__)

#define RG_FIELD(p) p;
#define RG_SET(a) r_->a = a;
#define RG_GET(a) r_->a
/* The bytes of the struct behind a pointer argument that a launcher reads when it is issued. */
#define RG_KEPT_BYTES(e)                                                                                               \
    _Generic((e), const rn_act_shape *: sizeof(rn_act_shape), const rn_adam_args *: sizeof(rn_adam_args),            \
             default: (size_t)0)
#define RG_KEEP(a) keep(gr_, (void *)&r_->a, RG_KEPT_BYTES(r_->a));

/* The first failure of a capture, kept for graph_end. */
static void capture_fail(ggraph *gr, const char *what)
{
    if (!gr->error[0]) snprintf(gr->error, sizeof gr->error, "device ref-guard: %s inside a graph capture", what);
}

/* A zeroed record of `bytes` for op, appended to gr. */
static void *record(ggraph *gr, int op, size_t bytes)
{
    if (gr->n == gr->cap) {
        gr->cap = gr->cap ? 2 * gr->cap : 64;
        gr->e = rn_xrealloc(gr->e, (size_t)gr->cap * sizeof *gr->e);
    }
    void *rec = rn_xcalloc(1, bytes);
    gr->e[gr->n++] = (gentry){op, rec};
    return rec;
}

/* *field (a pointer) replaced by a copy of the `bytes` it points to, owned by gr (bytes 0: kept as it is). */
static void keep(ggraph *gr, void *field, size_t bytes)
{
    const void *src;
    memcpy(&src, field, sizeof src);
    if (!bytes || !src) return;
    if (gr->nkept == gr->capkept) {
        gr->capkept = gr->capkept ? 2 * gr->capkept : 64;
        gr->kept = rn_xrealloc(gr->kept, (size_t)gr->capkept * sizeof *gr->kept);
    }
    void *copy = rn_xmalloc(bytes);
    memcpy(copy, src, bytes);
    gr->kept[gr->nkept++] = copy;
    memcpy(field, &copy, sizeof copy);
}

static ggraph *capturing(rn_device *dev) { return ((guard *)dev)->capture; }

/* One forward to ref for every entry of nn/device_ops.inc (fwd_<op>): a call or a release as it is,
 * an op with the buffers open, a waiting call counted too. Each sets dev to ref's device first.
 * Inside a capture an op is recorded (rec_<op>, replayed by replay_<op>) and a waiting call fails it. */
#define RN_DEVICE_CALL(ret, name, params, args)                                                                        \
    static ret fwd_##name params                                                                                       \
    {                                                                                                                  \
        dev = ((guard *)dev)->ref;                                                                                     \
        return dev->ops->name args;                                                                                    \
    }
#define RN_DEVICE_RELEASE(name, params, args)                                                                          \
    static void fwd_##name params                                                                                      \
    {                                                                                                                  \
        dev = ((guard *)dev)->ref;                                                                                     \
        dev->ops->name args;                                                                                           \
    }
#define RN_DEVICE_OP(name, params, args)                                                                               \
    typedef struct rec_##name {                                                                                        \
        RG_EACH(RG_FIELD, params)                                                                                      \
    } rec_##name;                                                                                                      \
    static void run_##name params                                                                                      \
    {                                                                                                                  \
        rn_device *g_ = dev;                                                                                           \
        dev = enter(g_, 0);                                                                                            \
        dev->ops->name args;                                                                                           \
        leave(g_);                                                                                                     \
    }                                                                                                                  \
    static void replay_##name(const void *rec)                                                                         \
    {                                                                                                                  \
        const rec_##name *r_ = rec;                                                                                    \
        run_##name(RG_LIST(RG_GET, args));                                                                             \
    }                                                                                                                  \
    static void fwd_##name params                                                                                      \
    {                                                                                                                  \
        ggraph *gr_ = capturing(dev);                                                                                  \
        if (!gr_) {                                                                                                    \
            run_##name args;                                                                                           \
            return;                                                                                                    \
        }                                                                                                              \
        if (RN_OP_##name == RN_OP_upload || RN_OP_##name == RN_OP_act_upload) capture_fail(gr_, #name " (pageable)");  \
        rec_##name *r_ = record(gr_, RN_OP_##name, sizeof *r_);                                                        \
        RG_EACH(RG_SET, args)                                                                                          \
        RG_EACH(RG_KEEP, args)                                                                                         \
    }
#define RN_DEVICE_WAIT_R(ret, name, params, args)                                                                      \
    static ret fwd_##name params                                                                                       \
    {                                                                                                                  \
        if (capturing(dev)) {                                                                                          \
            capture_fail(capturing(dev), "a waiting call (" #name ")");                                                \
            return (ret)0;                                                                                             \
        }                                                                                                              \
        rn_device *g_ = dev;                                                                                           \
        dev = enter(g_, 1);                                                                                            \
        ret r_ = dev->ops->name args;                                                                                  \
        leave(g_);                                                                                                     \
        return r_;                                                                                                     \
    }
#define RN_DEVICE_WAIT(name, params, args)                                                                             \
    static void fwd_##name params                                                                                      \
    {                                                                                                                  \
        if (capturing(dev)) {                                                                                          \
            capture_fail(capturing(dev), "a waiting call (" #name ")");                                                \
            return;                                                                                                    \
        }                                                                                                              \
        rn_device *g_ = dev;                                                                                           \
        dev = enter(g_, 1);                                                                                            \
        dev->ops->name args;                                                                                           \
        leave(g_);                                                                                                     \
    }
#include "nn/device_ops.inc"

/* replay_<op> by op index (NULL for what is not an op). */
static void (*const REPLAY[RN_OP_COUNT])(const void *rec) = {
#define RN_DEVICE_OP(name, params, args) [RN_OP_##name] = replay_##name,
#include "nn/device_ops.inc"
};

static void graph_free(ggraph *gr)
{
    if (!gr) return;
    for (int i = 0; i < gr->n; i++) free(gr->e[i].rec);
    for (int i = 0; i < gr->nkept; i++) free(gr->kept[i]);
    free(gr->e), free(gr->kept), free(gr);
}

/* Fresh pages, PROT_NONE: 2 MB aligned and advised huge when large, so that
 * protecting them between ops changes few page-table entries. */
static void *map_pages(size_t *bytes)
{
    const size_t huge = (size_t)2 << 20, page = (size_t)sysconf(_SC_PAGESIZE);
    size_t align = *bytes >= huge ? huge : page;
    *bytes = *bytes ? (*bytes + align - 1) / align * align : page;
    char *p = mmap(NULL, *bytes + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    size_t lead = (align - (uintptr_t)p % align) % align;
    if (lead) munmap(p, lead);
    munmap(p + lead + *bytes, align - lead);
    if (align == huge) (void)madvise(p + lead, *bytes, MADV_HUGEPAGE); /* a hint: fine if refused */
    return p + lead;
}

/* x appended to the list r[0 .. *n) of *cap slots (grown as needed). */
static void regions_add(region **r, int *n, int *cap, region x)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        *r = rn_xrealloc(*r, (size_t)*cap * sizeof **r);
    }
    (*r)[(*n)++] = x;
}

/* The index of the region at p in r[0 .. n), which must hold it (a buffer of this device). */
static int regions_find(const region *r, int n, const void *p)
{
    int i = 0;
    while (i < n && r[i].p != p) i++;
    RN_ASSERT(i < n);
    return i;
}

/* A conv or buffer created while a captured graph lives: the process stops with one line (see the top). */
static void after_capture(const guard *g, const char *what)
{
    if (!g->graphs) return;
    fprintf(stderr, "rootnet: device ref-guard: %s while %d captured graph%s live%s: on a GPU it may move the "
            "buffers a graph holds; create every conv and buffer before the first capture\n", what, g->graphs,
            g->graphs > 1 ? "s" : "", g->graphs > 1 ? "" : "s");
    abort();
}

static void *g_alloc(rn_device *dev, size_t bytes)
{
    guard *g = (guard *)dev;
    g->allocs++;
    if (g->capture)
        capture_fail(g->capture, "an alloc");
    else
        after_capture(g, "an alloc");
    void *p = map_pages(&bytes);
    if (!p) return NULL;
    regions_add(&g->r, &g->n, &g->cap, (region){p, bytes});
    return p;
}

static void g_free(rn_device *dev, void *buf)
{
    guard *g = (guard *)dev;
    if (!buf) return;
    if (g->capture) capture_fail(g->capture, "a free");
    int i = regions_find(g->r, g->n, buf);
    RN_ASSERT(!munmap(buf, g->r[i].bytes));
    g->r[i] = g->r[--g->n];
}

static int g_conv_create(rn_device *dev, rn_conv **out, const rn_conv_shape *s, rn_err *err)
{
    guard *g = (guard *)dev;
    if (g->capture)
        capture_fail(g->capture, "a conv_create");
    else
        after_capture(g, "a conv_create");
    return g->ref->ops->conv_create(g->ref, out, s, err);
}

static void g_conv_destroy(rn_device *dev, rn_conv *c)
{
    guard *g = (guard *)dev;
    if (g->capture) capture_fail(g->capture, "a conv_destroy");
    g->ref->ops->conv_destroy(g->ref, c);
}

/* ---- pinned host memory ---- */

static void *g_host_alloc(rn_device *dev, size_t bytes)
{
    guard *g = (guard *)dev;
    void *p = NULL;
    if (g->capture) capture_fail(g->capture, "a host_alloc");
    if (posix_memalign(&p, 64, bytes ? bytes : 64)) return NULL;
    regions_add(&g->pin, &g->npin, &g->cappin, (region){p, bytes});
    return p;
}

static void g_host_free(rn_device *dev, void *buf)
{
    guard *g = (guard *)dev;
    if (!buf) return;
    if (g->capture) capture_fail(g->capture, "a host_free");
    int i = regions_find(g->pin, g->npin, buf);
    free(buf);
    g->pin[i] = g->pin[--g->npin];
}

/* An upload from a host_alloc block (nn/device_ops.inc); a pageable source stops the process. */
static void g_upload_async(rn_device *dev, void *dst, const void *src, size_t bytes)
{
    guard *g = (guard *)dev;
    int i = 0;
    while (i < g->npin && !((const char *)src >= (const char *)g->pin[i].p &&
                            (const char *)src + bytes <= (const char *)g->pin[i].p + g->pin[i].bytes))
        i++;
    RN_ASSERT(i < g->npin); /* upload_async's source is pinned host memory (host_alloc) */
    if (g->capture) {
        capture_fail(g->capture, "an upload_async (ref-guard records none)");
        return;
    }
    rn_device *ref = enter(dev, 0);
    ref->ops->upload(ref, dst, src, bytes);
    leave(dev);
}

static void g_destroy(rn_device *dev)
{
    guard *g = (guard *)dev;
    RN_ASSERT(g->n == 0 && g->npin == 0); /* every buffer freed first (nn/device.h) */
    free(g->pin);
    graph_free(g->capture);
    rn_device_destroy(g->ref);
    free(g->r);
    free(g);
}

/* Events on the host clock: ref's ops are done when they return, so a timestamp taken then is
 * the time the work before it finished, as a GPU's event would record it. */
static void *g_events_create(rn_device *dev, int n)
{
    if (capturing(dev)) capture_fail(capturing(dev), "an events_create");
    return n > 0 ? rn_xcalloc((size_t)n, sizeof(double)) : NULL;
}

static void g_events_destroy(rn_device *dev, void *ev)
{
    if (capturing(dev)) capture_fail(capturing(dev), "an events_destroy");
    free(ev);
}

static void g_event_record(rn_device *dev, void *ev, int i)
{
    (void)dev;
    ((double *)ev)[i] = rn_prof_now();
}

static double g_event_elapsed_ms(rn_device *dev, void *ev, int a, int b)
{
    ((guard *)dev)->waits++;
    return 1e3 * (((double *)ev)[b] - ((double *)ev)[a]);
}

/* ---- graphs (see the top) ---- */

static int g_graph_begin(rn_device *dev, rn_err *err)
{
    guard *g = (guard *)dev;
    if (g->capture) return rn_err_set(err, "device ref-guard: graph_begin inside a graph capture");
    g->capture = rn_xcalloc(1, sizeof *g->capture);
    return 0;
}

static int g_graph_end(rn_device *dev, void **graph, rn_err *err)
{
    guard *g = (guard *)dev;
    ggraph *gr = g->capture;
    *graph = NULL;
    if (!gr) return rn_err_set(err, "device ref-guard: graph_end without graph_begin");
    g->capture = NULL;
    if (gr->error[0]) {
        rn_err_set(err, "%s", gr->error);
        graph_free(gr);
        return -1;
    }
    *graph = gr;
    g->graphs++;
    return 0;
}

static void g_graph_launch(rn_device *dev, void *graph)
{
    guard *g = (guard *)dev;
    const ggraph *gr = graph;
    if (g->capture) {
        capture_fail(g->capture, "a graph launch");
        return;
    }
    g->launches++;
    for (int i = 0; i < gr->n; i++) REPLAY[gr->e[i].op](gr->e[i].rec);
}

static void g_graph_destroy(rn_device *dev, void *graph)
{
    if (graph) ((guard *)dev)->graphs--;
    graph_free(graph);
}

/* The guard's ops: a forward for each op ref has (NULL where ref has none), then the guard's own
 * memory and host clock. */
static rn_device_ops guard_ops(const rn_device_ops *ref)
{
    rn_device_ops o = {
#define RN_DEVICE_ENTRY(ret, name, params, args) .name = ref->name ? fwd_##name : NULL,
#include "nn/device_ops.inc"
    };
    o.destroy = g_destroy;
    o.alloc = g_alloc;
    o.free = g_free;
    o.host_alloc = g_host_alloc;
    o.host_free = g_host_free;
    o.upload_async = g_upload_async;
    o.events_create = g_events_create;
    o.events_destroy = g_events_destroy;
    o.event_record = g_event_record;
    o.event_elapsed_ms = g_event_elapsed_ms;
    o.graph_begin = g_graph_begin;
    o.graph_end = g_graph_end;
    o.graph_launch = g_graph_launch;
    o.graph_destroy = g_graph_destroy;
    o.conv_create = g_conv_create;
    o.conv_destroy = g_conv_destroy;
    return o;
}

static const guard *as_guard(const rn_device *dev)
{
    RN_ASSERT(dev->ops->destroy == g_destroy); /* a ref-guard device */
    return (const guard *)dev;
}

long rn_ref_guard_waits(const rn_device *dev) { return as_guard(dev)->waits; }

long rn_ref_guard_allocs(const rn_device *dev) { return as_guard(dev)->allocs; }

long rn_ref_guard_launches(const rn_device *dev) { return as_guard(dev)->launches; }

int rn_ref_guard_device_create(rn_device **out, int threads, rn_err *err)
{
    guard *g = rn_xcalloc(1, sizeof *g);
    if (rn_ref_device_create(&g->ref, threads, err)) {
        free(g);
        return -1;
    }
    g->ops = guard_ops(g->ref->ops);
    g->base = (rn_device){.ops = &g->ops, .name = "ref-guard", .threads = 1, .host_memory = 0};
    *out = &g->base;
    return 0;
}
