/* The CUDA device's memory (cuda/cuda.h): its GPU made current, and every
 * cudaMalloc it holds, counted for mem_peak. Used by cuda_device.c (buffers,
 * staging, the workspace) and cuda_conv.c (reordered weights, staging). */
#include <stdlib.h>

#include "cuda/cuda.h"

rn_cuda_device *rn_cuda(rn_device *dev)
{
    rn_cuda_device *d = (rn_cuda_device *)dev;
    RN_CUDA_CHECK(cudaSetDevice(d->ordinal));
    return d;
}

void *rn_cuda_malloc(rn_cuda_device *d, size_t bytes)
{
    void *p = NULL;
    bytes = (bytes + 255) / 256 * 256 + 256 * !bytes;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
        (void)cudaGetLastError(); /* out of memory is the caller's to report, not a sticky error */
        return NULL;
    }
    if (d->nallocs == d->cap_allocs) {
        d->cap_allocs = d->cap_allocs ? 2 * d->cap_allocs : 256;
        rn_cuda_alloc *a = realloc(d->allocs, d->cap_allocs * sizeof *a);
        RN_ASSERT(a);
        d->allocs = a;
    }
    d->allocs[d->nallocs++] = (rn_cuda_alloc){p, bytes};
    d->held += bytes;
    if (d->held > d->peak) d->peak = d->held;
    return p;
}

void rn_cuda_release(rn_cuda_device *d, void *p)
{
    if (!p) return;
    if (!d->graphs) {
        rn_cuda_free(d, p);
        return;
    }
    if (d->nretired == d->cap_retired) {
        d->cap_retired = d->cap_retired ? 2 * d->cap_retired : 16;
        void **r = realloc(d->retired, d->cap_retired * sizeof *r);
        RN_ASSERT(r);
        d->retired = r;
    }
    d->retired[d->nretired++] = p;
}

void rn_cuda_graphs_add(rn_cuda_device *d, int delta)
{
    d->graphs += delta;
    RN_ASSERT(d->graphs >= 0);
    if (d->graphs) return;
    for (size_t i = 0; i < d->nretired; i++) rn_cuda_free(d, d->retired[i]);
    d->nretired = 0;
}

void rn_cuda_free(rn_cuda_device *d, void *p)
{
    if (!p) return;
    for (size_t i = 0; i < d->nallocs; i++)
        if (d->allocs[i].p == p) {
            d->held -= d->allocs[i].bytes;
            d->allocs[i] = d->allocs[--d->nallocs];
            RN_CUDA_CHECK(cudaFree(p));
            return;
        }
    RN_ASSERT(!"rn_cuda_free: not a buffer of this device");
}
