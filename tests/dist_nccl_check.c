/* src/cuda/cuda_comm.c on a GPU without the CUDA device (for the GPU machine; `make
 * cuda-comm-check` builds it as $(BUILD)/cuda-comm/dist_nccl_check): a stand-in device
 * holding an rn_cuda_comm, one rank (NCCL refuses two ranks on one GPU), on a stream of its own:
 *  - comm_id gives an ncclUniqueId (128 bytes), comm_init makes the communicator;
 *  - allreduce F32 with scale 0.5 = the values times 0.5 exactly (the scale kernel after the
 *    sum), F64 with scale 1 unchanged, broadcast from root 0 unchanged, comm_check clean; the
 *    collectives run on their own stream, and copies issued on the compute stream after
 *    comm_wait see their results;
 *  - errors: an all-reduce before comm_init, and a broadcast from root 5 of 1, are kept and
 *    returned by comm_check with the call's name; destroy then aborts the communicator.
 */
#include <cuda_runtime.h>
#include <string.h>

#include "check.h"
#include "cuda/cuda_comm.h"

typedef struct stand_in {
    rn_device base;
    rn_cuda_comm comm;
} stand_in;

rn_cuda_comm *rn_cuda_device_comm(rn_device *dev) { return &((stand_in *)dev)->comm; }

enum { NF = 1000, ND = 77 };

int main(void)
{
    stand_in d = {.base = {.name = "cuda:0"}}, bare = {.base = {.name = "cuda:0"}};
    cudaStream_t s;
    if (cudaSetDevice(0) != cudaSuccess || cudaStreamCreate(&s) != cudaSuccess) {
        printf("skipped: no GPU\n");
        return 77;
    }
    rn_cuda_comm_attach(&d.comm, s, 0);
    rn_cuda_comm_attach(&bare.comm, s, 0);
    rn_err err = {{0}};
    unsigned char id[RN_COMM_ID_BYTES];
    size_t len = rn_cuda_comm_id(&d.base, id, &err);
    RN_CHECK(len == 128, "comm_id: %zu bytes (%s)", len, err.msg);
    RN_CHECK(!rn_cuda_comm_init(&d.base, id, len, 0, 1, &err), "comm_init: %s", err.msg);
    float hf[NF], of[NF], *gf;
    double hd[ND], od[ND], *gd;
    for (int i = 0; i < NF; i++) hf[i] = (float)i * 0.37f - 3.0f;
    for (int i = 0; i < ND; i++) hd[i] = 1.0 / (i + 1);
    RN_CHECK(cudaMalloc((void **)&gf, sizeof hf) == cudaSuccess && cudaMalloc((void **)&gd, sizeof hd) == cudaSuccess,
             "cudaMalloc");
    cudaMemcpy(gf, hf, sizeof hf, cudaMemcpyHostToDevice);
    cudaMemcpy(gd, hd, sizeof hd, cudaMemcpyHostToDevice);
    rn_cuda_allreduce(&d.base, gf, NF, RN_NUM_F32, 0.5f);
    rn_cuda_allreduce(&d.base, gd, ND, RN_NUM_F64, 1.0f);
    rn_cuda_broadcast(&d.base, gd, sizeof hd, 0);
    RN_CHECK(d.comm.stream && d.comm.stream != s && d.comm.pending, "the collectives are on a stream of their own");
    rn_cuda_comm_wait(&d.base);
    RN_CHECK(!d.comm.pending, "comm_wait joins them");
    cudaMemcpyAsync(of, gf, sizeof of, cudaMemcpyDeviceToHost, s);
    cudaMemcpyAsync(od, gd, sizeof od, cudaMemcpyDeviceToHost, s);
    RN_CHECK(cudaStreamSynchronize(s) == cudaSuccess, "the compute stream finishes");
    int bad = 0;
    for (int i = 0; i < NF; i++) bad += of[i] != hf[i] * 0.5f;
    RN_CHECK(!bad, "F32 all-reduce x 0.5: %d of %d differ (e.g. [7] %.9g, want %.9g)", bad, NF, (double)of[7],
             (double)(hf[7] * 0.5f));
    RN_CHECK(!memcmp(od, hd, sizeof hd), "F64 all-reduce and broadcast: unchanged on one rank");
    RN_CHECK(!rn_cuda_comm_check(&d.base, &err), "comm_check clean: %s", err.msg);
    rn_cuda_allreduce(&bare.base, gf, NF, RN_NUM_F32, 1.0f);
    RN_CHECK(rn_cuda_comm_check(&bare.base, &err) && strstr(err.msg, "without a communicator"),
             "an all-reduce before comm_init is reported: %s", err.msg);
    rn_cuda_broadcast(&d.base, gf, 16, 5);
    int rc = rn_cuda_comm_check(&d.base, &err);
    RN_CHECK(rc && strstr(err.msg, "ncclBroadcast"), "a broadcast from root 5 of 1 is reported: %s", err.msg);
    printf("kept error: %s\n", err.msg);
    rn_cuda_comm_destroy(&d.base);
    rn_cuda_comm_destroy(&bare.base);
    RN_CHECK(!d.comm.comm, "destroy frees the communicator");
    cudaFree(gf), cudaFree(gd), cudaStreamDestroy(s);
    RN_CHECK_DONE();
}
