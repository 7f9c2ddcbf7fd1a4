/* The optimizer's kernels (cuda/kernels.h): one fused Adam pass over the flat
 * arenas, skipped on the device when unscale_check found an overflow, and the
 * unscale with its inf/NaN check in one pass.
 */
#include "cuda/k_common.cuh"

/* The step's schedule is read here, when the kernel runs (a replayed graph's step is the current one). */
__global__ void k_adam(float *param, const float *grad, float *m, float *v, size_t n, double beta1, double beta2,
                       double eps, const double *sched, const int *finite)
{
    if (finite && !*finite) return;
    rn_km_adam a = rn_km_adam_scalars(beta1, beta2, eps, sched);
    for (size_t i = RN_K_TID(); i < n; i += RN_K_STRIDE()) {
        float mi = m[i], vi = v[i];
        param[i] = rn_km_adam_update(&a, param[i], grad[i], &mi, &vi);
        m[i] = mi;
        v[i] = vi;
    }
}

extern "C" void rn_cuda_adam(const rn_cuda_kctx *k, float *param, const float *grad, float *m, float *v, size_t n,
                             const rn_adam_args *h)
{
    if (!n) return;
    k_adam<<<rn_k_grid(k, n), RN_K_THREADS, 0, k->stream>>>(param, grad, m, v, n, h->beta1, h->beta2, h->eps,
                                                            h->sched, h->finite);
}

__global__ void k_set_int(int *p, int v) { *p = v; }

/* grad *= inv_scale (unless 1); a block that meets Inf or NaN clears *finite. */
__global__ void k_unscale_check(float *grad, size_t n, float inv_scale, int *finite)
{
    int ok = 1;
    for (size_t i = RN_K_TID(); i < n; i += RN_K_STRIDE()) {
        float g = grad[i];
        if (inv_scale != 1.0f) {
            g = rn_km_unscale(g, inv_scale);
            grad[i] = g;
        }
        ok &= rn_km_finite(g);
    }
    if (!__syncthreads_and(ok) && threadIdx.x == 0) *finite = 0;
}

extern "C" void rn_cuda_unscale_check(const rn_cuda_kctx *k, float *grad, size_t n, float inv_scale, int *finite)
{
    k_set_int<<<1, 1, 0, k->stream>>>(finite, 1);
    if (!n) return;
    k_unscale_check<<<rn_k_grid(k, n), RN_K_THREADS, 0, k->stream>>>(grad, n, inv_scale, finite);
}
