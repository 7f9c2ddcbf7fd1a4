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
 *   rootnet step --device ref-guard ...     # as --device ref, or a segfault
 */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/profile.h"
#include "nn/device.h"
#include "ref/ref.h"

typedef struct region {
    void *p;
    size_t bytes;
} region;

typedef struct guard {
    rn_device base;
    rn_device_ops ops; /* base.ops: ref's ops behind the guard, and the guard's own memory and clock */
    rn_device *ref;    /* does the work */
    region *r;         /* live buffers */
    int n, cap;
    long waits;        /* waiting calls so far (nn/device_ops.inc's WAIT entries) */
    long allocs;       /* alloc calls so far */
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

/* One forward to ref for every entry of nn/device_ops.inc (fwd_<op>): a call or a release as it is,
 * an op with the buffers open, a waiting call counted too. Each sets dev to ref's device first. */
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
#define FWD_OPEN(name, params, args, wait)                                                                             \
    static void fwd_##name params                                                                                      \
    {                                                                                                                  \
        rn_device *g_ = dev;                                                                                           \
        dev = enter(g_, wait);                                                                                         \
        dev->ops->name args;                                                                                           \
        leave(g_);                                                                                                     \
    }
#define RN_DEVICE_OP(name, params, args) FWD_OPEN(name, params, args, 0)
#define RN_DEVICE_WAIT(name, params, args) FWD_OPEN(name, params, args, 1)
#define RN_DEVICE_WAIT_R(ret, name, params, args)                                                                      \
    static ret fwd_##name params                                                                                       \
    {                                                                                                                  \
        rn_device *g_ = dev;                                                                                           \
        dev = enter(g_, 1);                                                                                            \
        ret r_ = dev->ops->name args;                                                                                  \
        leave(g_);                                                                                                     \
        return r_;                                                                                                     \
    }
#include "nn/device_ops.inc"
#undef FWD_OPEN

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

static void *g_alloc(rn_device *dev, size_t bytes)
{
    guard *g = (guard *)dev;
    g->allocs++;
    void *p = map_pages(&bytes);
    if (!p) return NULL;
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 16;
        region *r = rn_xcalloc((size_t)g->cap, sizeof *r);
        for (int i = 0; i < g->n; i++) r[i] = g->r[i];
        free(g->r);
        g->r = r;
    }
    g->r[g->n++] = (region){p, bytes};
    return p;
}

static void g_free(rn_device *dev, void *buf)
{
    guard *g = (guard *)dev;
    if (!buf) return;
    int i = 0;
    while (i < g->n && g->r[i].p != buf) i++;
    RN_ASSERT(i < g->n); /* a buffer of this device */
    RN_ASSERT(!munmap(buf, g->r[i].bytes));
    g->r[i] = g->r[--g->n];
}

static void g_destroy(rn_device *dev)
{
    guard *g = (guard *)dev;
    RN_ASSERT(g->n == 0); /* every buffer freed first (nn/device.h) */
    rn_device_destroy(g->ref);
    free(g->r);
    free(g);
}

/* Events on the host clock: ref's ops are done when they return, so a timestamp taken then is
 * the time the work before it finished, as a GPU's event would record it. */
static void *g_events_create(rn_device *dev, int n)
{
    (void)dev;
    return n > 0 ? rn_xcalloc((size_t)n, sizeof(double)) : NULL;
}

static void g_events_destroy(rn_device *dev, void *ev)
{
    (void)dev;
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
    o.events_create = g_events_create;
    o.events_destroy = g_events_destroy;
    o.event_record = g_event_record;
    o.event_elapsed_ms = g_event_elapsed_ms;
    return o;
}

static const guard *as_guard(const rn_device *dev)
{
    RN_ASSERT(dev->ops->destroy == g_destroy); /* a ref-guard device */
    return (const guard *)dev;
}

long rn_ref_guard_waits(const rn_device *dev) { return as_guard(dev)->waits; }

long rn_ref_guard_allocs(const rn_device *dev) { return as_guard(dev)->allocs; }

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
