/* The CUDA device's checks (cuda/cuda.h): a failing CUDA or cuDNN call named
 * with its status and file:line, aborting inside an op, one line in an rn_err
 * on a create path; and the check after every kernel launcher. */
#include <stdio.h>
#include <stdlib.h>

#include "cuda/cuda.h"

void rn_cuda_check_at(cudaError_t e, const char *call, const char *file, int line)
{
    if (e == cudaSuccess) return;
    fprintf(stderr, "rootnet: CUDA error at %s:%d: %s: %s (%s)\n", file, line, call, cudaGetErrorName(e),
            cudaGetErrorString(e));
    abort();
}

void rn_cudnn_check_at(cudnnStatus_t s, const char *call, const char *file, int line)
{
    if (s == CUDNN_STATUS_SUCCESS) return;
    fprintf(stderr, "rootnet: cuDNN error at %s:%d: %s: %s\n", file, line, call, cudnnGetErrorString(s));
    abort();
}

int rn_cuda_ok_at(cudaError_t e, const char *call, const char *file, int line, rn_err *err)
{
    if (e == cudaSuccess) return 1;
    rn_err_set(err, "device cuda: %s failed at %s:%d: %s (%s)", call, file, line, cudaGetErrorName(e),
               cudaGetErrorString(e));
    return 0;
}

int rn_cudnn_ok_at(cudnnStatus_t s, const char *call, const char *file, int line, rn_err *err)
{
    if (s == CUDNN_STATUS_SUCCESS) return 1;
    rn_err_set(err, "device cuda: %s failed at %s:%d: %s", call, file, line, cudnnGetErrorString(s));
    return 0;
}

void rn_cuda_launched_at(rn_cuda_device *d, const char *op, const char *file, int line)
{
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess && d->sync_each) e = cudaStreamSynchronize(d->stream);
    if (e == cudaSuccess) return;
    fprintf(stderr, "rootnet: CUDA error in op %s at %s:%d: %s (%s)\n", op, file, line, cudaGetErrorName(e),
            cudaGetErrorString(e));
    abort();
}
