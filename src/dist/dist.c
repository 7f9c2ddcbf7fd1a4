#include "dist/dist.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rn_dist_any(rn_dist *d, int flag)
{
    rn_err err;
    double v = flag != 0;
    if (rn_dist_allreduce_sum(d, &v, 1, &err)) return 1;
    return v > 0;
}

size_t rn_dist_bucket_floats(double mb) { return mb > 0 ? (size_t)(mb * 1e6 / sizeof(float)) : 0; }

int rn_dist_launched(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "MPI_LOCALNRANKS", NULL};
    for (int i = 0; vars[i]; i++)
        if (getenv(vars[i])) return 1;
    return 0;
}

/* GPUs this node shows this process: CUDA_VISIBLE_DEVICES' entries, else the NVIDIA driver's
 * list; 0 when unknown. */
static int visible_gpus(void)
{
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    int n = 0;
    if (vis && *vis) {
        for (n = 1; *vis; vis++) n += *vis == ',';
        return n;
    }
    DIR *dir = opendir("/proc/driver/nvidia/gpus");
    if (!dir) return 0;
    for (struct dirent *e; (e = readdir(dir));) n += e->d_name[0] != '.';
    closedir(dir);
    return n;
}

int rn_dist_device_name(const rn_dist *d, const char *name, char *out, size_t cap)
{
    int n;
    if (rn_dist_size(d) > 1 && !strcmp(name, "cuda")) {
        int g = visible_gpus(), r = rn_dist_local_rank(d);
        n = snprintf(out, cap, "cuda:%d", g > 0 ? r % g : r);
    } else {
        n = snprintf(out, cap, "%s", name);
    }
    return n >= 0 && (size_t)n < cap ? 0 : -1;
}

#ifndef RN_HAVE_MPI

int rn_dist_available(void) { return 0; }

int rn_dist_init(rn_dist **d, double timeout_s, rn_err *err)
{
    (void)timeout_s;
    *d = NULL;
    return rn_err_set(err, "this rootnet was built without MPI (mpicc was not found at build time): "
                           "mpirun launches and --sync-bn need an MPI build (install openmpi, then make clean all)");
}

void rn_dist_finalize(rn_dist *d) { (void)d; }
void rn_dist_abort(rn_dist *d, int code) { (void)d, (void)code; }
int rn_dist_rank(const rn_dist *d) { return (void)d, 0; }
int rn_dist_size(const rn_dist *d) { return (void)d, 1; }
int rn_dist_local_rank(const rn_dist *d) { return (void)d, 0; }
int rn_dist_device_collectives(const rn_dist *d) { return (void)d, 0; }
int rn_dist_allreduce_sum(rn_dist *d, double *buf, int n, rn_err *err) { return (void)d, (void)buf, (void)n, (void)err, 0; }
int rn_dist_allreduce_mean(rn_dist *d, double *buf, int n, rn_err *err) { return (void)d, (void)buf, (void)n, (void)err, 0; }
int rn_dist_bcast_params(rn_dist *d, rn_params *p, rn_err *err) { return (void)d, (void)p, (void)err, 0; }
int rn_dist_bcast_stats(rn_dist *d, rn_params *p, rn_err *err) { return (void)d, (void)p, (void)err, 0; }
int rn_dist_barrier(rn_dist *d, rn_err *err) { return (void)d, (void)err, 0; }
int rn_dist_grads_setup(rn_dist *d, rn_params *p, size_t bucket_floats, rn_err *err)
{
    return (void)d, (void)p, (void)bucket_floats, (void)err, 0;
}
int rn_dist_grads_finish(rn_dist *d, rn_err *err) { return (void)d, (void)err, 0; }
double rn_dist_comm_seconds(rn_dist *d, int reset) { return (void)d, (void)reset, 0.0; }
rn_device_reduce rn_dist_bn_reduce(rn_dist *d) { return (void)d, (rn_device_reduce){0}; }
rn_model_grad_ready rn_dist_grad_ready(rn_dist *d) { return (void)d, (rn_model_grad_ready){0}; }
int rn_dist_check(rn_dist *d, rn_err *err) { return (void)d, (void)err, 0; }

#endif
