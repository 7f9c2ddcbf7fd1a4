/* The scale after an all-reduce (cuda_comm.c): the sum times scale, on the collective's stream. */
#include "cuda/cuda_comm.h"

template <typename T> __global__ void scale_kernel(T *x /* (n) */, size_t n, T s)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] *= s;
}

extern "C" cudaError_t rn_cuda_comm_scale(void *buf, size_t n, int f64, float scale, cudaStream_t stream)
{
    if (n == 0) return cudaSuccess;
    const unsigned threads = 256;
    size_t want = (n + threads - 1) / threads;
    unsigned blocks = want < 4096 ? (unsigned)want : 4096u;
    if (f64)
        scale_kernel<double><<<blocks, threads, 0, stream>>>((double *)buf, n, (double)scale);
    else
        scale_kernel<float><<<blocks, threads, 0, stream>>>((float *)buf, n, scale);
    return cudaGetLastError();
}
