/* The guard device ("ref-guard"), for tests: the reference device behind
 * memory the host may not touch. Each buffer is its own mmap'd pages,
 * readable and writable only while one of this device's ops runs; between ops
 * every buffer is PROT_NONE, so a host read or write through a device pointer
 * (which a CUDA device's memory would not allow either) stops the process
 * with SIGSEGV at that line. host_memory is 0, so the model, the trainer, the
 * snapshots and the distribution take their download/upload paths; every
 * number is the ref device's, bit for bit.
 *
 *   rootnet step --device ref-guard ...     # as --device ref, or a segfault
 */
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>

#include <unistd.h>

#include "nn/device.h"

typedef struct region {
    void *p;
    size_t bytes;
} region;

typedef struct guard {
    rn_device base;
    rn_device *ref; /* does the work */
    region *r;      /* live buffers */
    int n, cap;
    long waits;     /* waiting calls so far (download, act_download, synchronize) */
} guard;

/* Every live buffer to prot (PROT_READ | PROT_WRITE inside an op, PROT_NONE outside). */
static void protect(guard *g, int prot)
{
    for (int i = 0; i < g->n; i++) RN_ASSERT(!mprotect(g->r[i].p, g->r[i].bytes, prot));
}

#define OPEN(g) protect(g, PROT_READ | PROT_WRITE)
#define CLOSE(g) protect(g, PROT_NONE)
#define REF(dev) (((guard *)(dev))->ref)

/* An op that returns nothing: the ref device's, with the buffers open. */
#define WRAP(name, params, args)                                                                                       \
    static void g_##name params                                                                                        \
    {                                                                                                                  \
        OPEN((guard *)dev);                                                                                            \
        REF(dev)->ops->name args;                                                                                      \
        CLOSE((guard *)dev);                                                                                           \
    }

/* An op that returns a value of type T. */
#define WRAP_R(T, name, params, args)                                                                                  \
    static T g_##name params                                                                                           \
    {                                                                                                                  \
        OPEN((guard *)dev);                                                                                            \
        T r_ = REF(dev)->ops->name args;                                                                               \
        CLOSE((guard *)dev);                                                                                           \
        return r_;                                                                                                     \
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

static void *g_alloc(rn_device *dev, size_t bytes)
{
    guard *g = (guard *)dev;
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

static int g_supports(rn_device *dev, rn_compute compute, rn_act_type act)
{
    return REF(dev)->ops->supports(REF(dev), compute, act);
}

static size_t g_act_bytes(rn_device *dev, const rn_act_shape *a) { return REF(dev)->ops->act_bytes(REF(dev), a); }

static void g_conv_destroy(rn_device *dev, rn_conv *c) { REF(dev)->ops->conv_destroy(REF(dev), c); }

static const char *g_conv_impl_name(rn_device *dev, const rn_conv *c, int direction)
{
    return REF(dev)->ops->conv_impl_name(REF(dev), c, direction);
}

WRAP(upload, (rn_device * dev, void *dst, const void *src, size_t bytes), (REF(dev), dst, src, bytes))
/* The waiting calls (nn/device.h): counted, so that a test can hold a step to its one wait. */
#define WRAP_WAIT(name, params, args)                                                                                  \
    static void g_##name params                                                                                        \
    {                                                                                                                  \
        ((guard *)dev)->waits++;                                                                                       \
        OPEN((guard *)dev);                                                                                            \
        REF(dev)->ops->name args;                                                                                      \
        CLOSE((guard *)dev);                                                                                           \
    }

WRAP_WAIT(download, (rn_device * dev, void *dst, const void *src, size_t bytes), (REF(dev), dst, src, bytes))
WRAP(copy, (rn_device * dev, void *dst, const void *src, size_t bytes), (REF(dev), dst, src, bytes))
WRAP(zero, (rn_device * dev, void *buf, size_t bytes), (REF(dev), buf, bytes))
WRAP(fill, (rn_device * dev, float *buf, float value, size_t n), (REF(dev), buf, value, n))
WRAP(act_upload, (rn_device * dev, void *dst, const float *src, const rn_act_shape *a), (REF(dev), dst, src, a))
WRAP_WAIT(act_download, (rn_device * dev, float *dst, const void *src, const rn_act_shape *a), (REF(dev), dst, src, a))
WRAP_WAIT(synchronize, (rn_device * dev), (REF(dev)))
WRAP_R(int, conv_create, (rn_device * dev, rn_conv **out, const rn_conv_shape *s, rn_err *err),
       (REF(dev), out, s, err))
WRAP(conv_set_weights, (rn_device * dev, rn_conv *c, const float *w), (REF(dev), c, w))
WRAP(conv_forward, (rn_device * dev, rn_conv *c, void *dst, const void *src), (REF(dev), c, dst, src))
WRAP(conv_backward_data, (rn_device * dev, rn_conv *c, void *ds, const void *dd), (REF(dev), c, ds, dd))
WRAP(conv_backward_weights, (rn_device * dev, rn_conv *c, float *dw, const void *src, const void *dd),
     (REF(dev), c, dw, src, dd))
WRAP(bn_sums, (rn_device * dev, double *sums, const void *x, const rn_act_shape *a), (REF(dev), sums, x, a))
WRAP(bn_stats, (rn_device * dev, float *mean, float *var, const double *sums, double count, int C),
     (REF(dev), mean, var, sums, count, C))
WRAP(bn_update_running,
     (rn_device * dev, float *rm, float *rv, const float *mean, const float *var, double mom, long count, int C),
     (REF(dev), rm, rv, mean, var, mom, count, C))
WRAP(bn_fold,
     (rn_device * dev, float *scale, float *shift, const float *mean, const float *var, const float *gamma,
      const float *beta, int C),
     (REF(dev), scale, shift, mean, var, gamma, beta, C))
WRAP(bn_apply,
     (rn_device * dev, void *y, const void *x, const float *scale, const float *shift, int relu,
      const rn_act_shape *a),
     (REF(dev), y, x, scale, shift, relu, a))
WRAP(bn_add_relu,
     (rn_device * dev, void *y, const void *x, const float *scale, const float *shift, const void *r,
      const rn_act_shape *a),
     (REF(dev), y, x, scale, shift, r, a))
WRAP(bn2_add_relu,
     (rn_device * dev, void *y, const void *x1, const float *s1, const float *h1, const void *x2, const float *s2,
      const float *h2, const rn_act_shape *a),
     (REF(dev), y, x1, s1, h1, x2, s2, h2, a))
WRAP(bn_backward_sums,
     (rn_device * dev, double *sums, const void *dy, const void *ro, const void *x, const float *mean,
      const rn_act_shape *a),
     (REF(dev), sums, dy, ro, x, mean, a))
WRAP(bn_backward_params, (rn_device * dev, float *dg, float *db, const double *sums, const float *var, int C),
     (REF(dev), dg, db, sums, var, C))
WRAP(bn_backward_data,
     (rn_device * dev, void *dx, const void *dy, const void *ro, const void *x, const float *mean, const float *var,
      const float *gamma, const double *sums, double count, const rn_act_shape *a),
     (REF(dev), dx, dy, ro, x, mean, var, gamma, sums, count, a))
WRAP(relu_backward, (rn_device * dev, void *d, const void *y, const rn_act_shape *a), (REF(dev), d, y, a))
WRAP(add, (rn_device * dev, void *y, const void *x, const rn_act_shape *a), (REF(dev), y, x, a))
WRAP(maxpool_forward, (rn_device * dev, void *y, const void *x, const rn_act_shape *a, int oh, int ow),
     (REF(dev), y, x, a, oh, ow))
WRAP(maxpool_backward,
     (rn_device * dev, void *dx, const void *dy, const void *x, const rn_act_shape *a, int oh, int ow),
     (REF(dev), dx, dy, x, a, oh, ow))
WRAP(gap_forward, (rn_device * dev, float *out, const void *x, const rn_act_shape *a), (REF(dev), out, x, a))
WRAP(gap_backward, (rn_device * dev, void *dx, const float *dout, const rn_act_shape *a), (REF(dev), dx, dout, a))
WRAP(xy_forward,
     (rn_device * dev, float *coord, float *prob, const void *a_in, const float *w, const float *b,
      const rn_act_shape *a),
     (REF(dev), coord, prob, a_in, w, b, a))
WRAP(xy_backward,
     (rn_device * dev, void *da, float *dw, float *db, const float *dcoord, float *prob, const void *a_in,
      const float *w, const rn_act_shape *a),
     (REF(dev), da, dw, db, dcoord, prob, a_in, w, a))
WRAP(depth_forward,
     (rn_device * dev, float *depth, float *gamma, const float *feat, const float *w, const float *b, const float *k,
      int N, int C),
     (REF(dev), depth, gamma, feat, w, b, k, N, C))
WRAP(depth_backward,
     (rn_device * dev, float *dfeat, float *dw, float *db, const float *ddepth, const float *feat, const float *w,
      const float *k, int N, int C),
     (REF(dev), dfeat, dw, db, ddepth, feat, w, k, N, C))
WRAP(coords, (rn_device * dev, float *coord, const float *xy, const float *depth, int N), (REF(dev), coord, xy, depth, N))
WRAP(loss,
     (rn_device * dev, double *out, float *dxy, float *ddepth, const float *coord, const float *target,
      const float *vis, const float *hd, float scale, int N),
     (REF(dev), out, dxy, ddepth, coord, target, vis, hd, scale, N))
WRAP(adam, (rn_device * dev, float *param, const float *grad, float *m, float *v, size_t n, const rn_adam_args *h),
     (REF(dev), param, grad, m, v, n, h))
WRAP(unscale_check, (rn_device * dev, float *grad, size_t n, float inv_scale, int *finite),
     (REF(dev), grad, n, inv_scale, finite))

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
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ((double *)ev)[i] = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double g_event_elapsed_ms(rn_device *dev, void *ev, int a, int b)
{
    ((guard *)dev)->waits++;
    return 1e3 * (((double *)ev)[b] - ((double *)ev)[a]);
}

static const rn_device_ops guard_ops = {
    .destroy = g_destroy,
    .supports = g_supports,
    .alloc = g_alloc,
    .free = g_free,
    .act_bytes = g_act_bytes,
    .upload = g_upload,
    .download = g_download,
    .copy = g_copy,
    .zero = g_zero,
    .fill = g_fill,
    .act_upload = g_act_upload,
    .act_download = g_act_download,
    .synchronize = g_synchronize,
    .events_create = g_events_create,
    .events_destroy = g_events_destroy,
    .event_record = g_event_record,
    .event_elapsed_ms = g_event_elapsed_ms,
    .conv_create = g_conv_create,
    .conv_destroy = g_conv_destroy,
    .conv_set_weights = g_conv_set_weights,
    .conv_forward = g_conv_forward,
    .conv_backward_data = g_conv_backward_data,
    .conv_backward_weights = g_conv_backward_weights,
    .conv_impl_name = g_conv_impl_name,
    .bn_sums = g_bn_sums,
    .bn_stats = g_bn_stats,
    .bn_update_running = g_bn_update_running,
    .bn_fold = g_bn_fold,
    .bn_apply = g_bn_apply,
    .bn_add_relu = g_bn_add_relu,
    .bn2_add_relu = g_bn2_add_relu,
    .bn_backward_sums = g_bn_backward_sums,
    .bn_backward_params = g_bn_backward_params,
    .bn_backward_data = g_bn_backward_data,
    .relu_backward = g_relu_backward,
    .add = g_add,
    .maxpool_forward = g_maxpool_forward,
    .maxpool_backward = g_maxpool_backward,
    .gap_forward = g_gap_forward,
    .gap_backward = g_gap_backward,
    .xy_forward = g_xy_forward,
    .xy_backward = g_xy_backward,
    .depth_forward = g_depth_forward,
    .depth_backward = g_depth_backward,
    .coords = g_coords,
    .loss = g_loss,
    .adam = g_adam,
    .unscale_check = g_unscale_check,
};

long rn_ref_guard_waits(const rn_device *dev)
{
    RN_ASSERT(dev->ops == &guard_ops);
    return ((const guard *)dev)->waits;
}

int rn_ref_guard_device_create(rn_device **out, int threads, rn_err *err)
{
    guard *g = rn_xcalloc(1, sizeof *g);
    if (rn_ref_device_create(&g->ref, threads, err)) {
        free(g);
        return -1;
    }
    g->base = (rn_device){.ops = &guard_ops, .name = "ref-guard", .threads = 1, .host_memory = 0};
    *out = &g->base;
    return 0;
}
