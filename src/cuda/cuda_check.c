/* The CUDA device's checks (cuda/cuda.h): a failing CUDA or cuDNN call named
 * with its status and file:line, aborting inside an op (recorded instead inside
 * a graph capture), one line in an rn_err on a create path; and the check after
 * every kernel launcher. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda/cuda.h"

/* The calling thread's capture (cuda/cuda.h): on, and the first failure's line. */
typedef struct capture_rec {
    int on;
    char first[300];
} capture_rec;
static _Thread_local capture_rec capture;

void rn_cuda_capture_start(void)
{
    capture.on = 1;
    capture.first[0] = 0;
}

int rn_cuda_capture_stop(rn_err *err)
{
    capture.on = 0;
    if (!capture.first[0]) return 0;
    return rn_err_set(err, "%s", capture.first);
}

int rn_cuda_capturing(void) { return capture.on; }

/* One failure's line: recorded (the first) inside a capture, else printed and the process stopped. */
static void failed(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (capture.on) {
        if (!capture.first[0]) vsnprintf(capture.first, sizeof capture.first, fmt, ap);
        va_end(ap);
        return;
    }
    fputs("rootnet: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

void rn_cuda_capture_fail(const char *what) { failed("device cuda: %s inside a graph capture", what); }

void rn_cuda_check_at(cudaError_t e, const char *call, const char *file, int line)
{
    if (e == cudaSuccess) return;
    failed("CUDA error at %s:%d: %s: %s (%s)", file, line, call, cudaGetErrorName(e), cudaGetErrorString(e));
}

void rn_cudnn_check_at(cudnnStatus_t s, const char *call, const char *file, int line)
{
    if (s == CUDNN_STATUS_SUCCESS) return;
    failed("cuDNN error at %s:%d: %s: %s", file, line, call, cudnnGetErrorString(s));
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
    failed("CUDA error in op %s at %s:%d: %s (%s)", op, file, line, cudaGetErrorName(e), cudaGetErrorString(e));
}
