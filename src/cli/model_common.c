/* What rootnet forward, step and bench share: .npy inputs, a batch's buffers, the run's set-up. */
#include "cli/model_common.h"

#include <math.h>
#include <string.h>

#include "cli/dist_cli.h"
#include "cli/exit.h"
#include "io/tensors.h"
#include "nn/net.h"

void rn_cli_input_free(rn_cli_input *in) { free(in->d), in->d = NULL; }

int rn_cli_input_read(rn_cli_input *in, const char *path, const char *what, int nwant, const int64_t *want, int64_t *dims,
                      rn_err *err)
{
    rn_tensor t;
    memset(in, 0, sizeof *in);
    if (rn_npy_read(&t, path, err)) return rn_err_prefix(err, "%s", what);
    int rc = 0;
    if (!rn_dtype_is_float(t.dtype))
        rc = rn_err_set(err, "%s: %s: dtype %s, expected float32", what, path, rn_dtype_name(t.dtype));
    else if (t.ndim != 1 + nwant || t.shape[0] < 1)
        rc = rn_err_set(err, "%s: %s: expected %d dimensions (N, ...) with N >= 1, got %d", what, path, 1 + nwant, t.ndim);
    for (int d = 0; !rc && d < nwant; d++)
        if (want[d] >= 0 && t.shape[d + 1] != want[d])
            rc = rn_err_set(err, "%s: %s: dimension %d is %lld, expected %lld", what, path, d + 1,
                            (long long)t.shape[d + 1], (long long)want[d]);
    if (!rc) {
        size_t count = (size_t)rn_tensor_numel(&t);
        in->n = t.shape[0];
        in->per = count / (size_t)in->n;
        in->d = rn_xmalloc(count * sizeof(float));
        for (int d = 0; d < nwant && dims; d++) dims[d] = t.shape[d + 1];
        rc = rn_tensor_to_f32(in->d, &t, count, err);
        for (size_t i = 0; !rc && i < count; i++)
            if (!isfinite(in->d[i]))
                rc = rn_err_set(err, "%s: %s: sample %zu holds %g (NaN or Inf)", what, path, i / in->per, (double)in->d[i]);
    }
    rn_tensor_free(&t);
    if (rc) rn_cli_input_free(in);
    return rc;
}

int rn_cli_input_read_vec(rn_cli_input *in, const char *path, const char *what, rn_err *err)
{
    rn_tensor t;
    if (rn_npy_read(&t, path, err)) return rn_err_prefix(err, "%s", what);
    int ndim = t.ndim;
    int64_t last = ndim == 2 ? t.shape[1] : 1;
    rn_tensor_free(&t);
    if (ndim != 1 && !(ndim == 2 && last == 1))
        return rn_err_set(err, "%s: %s: expected shape (N) or (N, 1)", what, path);
    int64_t one = 1;
    return rn_cli_input_read(in, path, what, ndim - 1, &one, NULL, err);
}

int rn_cli_input_read_rows(rn_cli_input *in, const char *path, const char *what, int K, int cols, rn_err *err)
{
    rn_tensor t;
    if (rn_npy_read(&t, path, err)) return rn_err_prefix(err, "%s", what);
    int ndim = t.ndim;
    int64_t d1 = ndim > 1 ? t.shape[1] : 0;
    rn_tensor_free(&t);
    int64_t want[2] = {K, cols};
    if (ndim == 3 || (ndim == 2 && d1 == K && K > 1 && cols == 1))
        return rn_cli_input_read(in, path, what, ndim - 1, want, NULL, err);
    if (K == 1) return cols == 1 ? rn_cli_input_read_vec(in, path, what, err)
                                 : rn_cli_input_read(in, path, what, 1, &want[1], NULL, err);
    return rn_err_set(err, "%s: %s: expected shape (N, %d, %d)%s for a net of %d output rows", what, path, K, cols,
                      cols == 1 ? " or (N, K)" : "", K);
}

int rn_cli_input_same_n(const rn_cli_input *a, const rn_cli_input *b, const char *what, const char *path, rn_err *err)
{
    if (a->n != b->n)
        return rn_err_set(err, "%s: %s has %lld samples but the images have %lld", what, path, (long long)b->n,
                          (long long)a->n);
    return 0;
}

int rn_cli_input_check_size(const int64_t *xd, const char *path, rn_err *err)
{
    if (xd[1] % 32 || xd[2] % 32)
        return rn_err_set(err, "images: %s: size %lldx%lld, height and width must be multiples of 32", path,
                          (long long)xd[1], (long long)xd[2]);
    return 0;
}

int rn_cli_input_check_k(const rn_cli_input *k, const char *path, rn_err *err)
{
    for (int64_t i = 0; i < k->n; i++)
        if (!(k->d[i] > 0))
            return rn_err_set(err, "k: %s: sample %lld has k = %g, must be > 0", path, (long long)i, (double)k->d[i]);
    return 0;
}

static float *batch_floats(rn_device *pin, size_t n)
{
    if (!pin) return rn_xmalloc(n * sizeof(float));
    float *p = pin->ops->host_alloc(pin, n * sizeof(float));
    RN_ASSERT(p); /* pinned host memory for one batch */
    return p;
}

rn_cli_batch rn_cli_batch_alloc(int b, size_t per, int K, rn_device *pin)
{
    size_t n = (size_t)b, k = (size_t)K;
    return (rn_cli_batch){batch_floats(pin, n * per), batch_floats(pin, n), batch_floats(pin, 3 * n * k),
                          batch_floats(pin, n * k), batch_floats(pin, n), pin};
}

void rn_cli_batch_free(rn_cli_batch *bt)
{
    float *a[5] = {bt->x, bt->k, bt->t, bt->v, bt->d};
    for (int i = 0; i < 5; i++)
        if (bt->pin) bt->pin->ops->host_free(bt->pin, a[i]);
        else free(a[i]);
}


int rn_cli_run_begin(rn_cli_run *r, const char *cmd, int sync_bn, double timeout_s, rn_tuning_flags *tf, int threads)
{
    memset(r, 0, sizeof *r);
    if (rn_cli_dist_start(&r->d, cmd, sync_bn, timeout_s)) return RN_EXIT_FAIL;
    tf->device = rn_cli_dist_device(r->d, tf->device, r->dev, sizeof r->dev);
    if (rn_tuning_setup(&r->tn, tf, threads, &r->err)) {
        rn_tuning_free(&r->tn);
        return rn_cli_dist_fail(r->d, cmd, RN_EXIT_USAGE, &r->err);
    }
    return 0;
}

int rn_cli_run_end(rn_cli_run *r, const char *cmd, int rc, int code)
{
    rn_tuning_free(&r->tn);
    if (rc) return rn_cli_dist_fail(r->d, cmd, code, &r->err);
    rn_dist_finalize(r->d);
    return 0;
}

int rn_cli_net_choose(const rn_net **net, const char *name, const char *joints, rn_err *err)
{
    char names[128];
    *net = rn_net_find(name, joints);
    if (*net) return 0;
    if (!rn_net_find(name, NULL))
        return rn_err_set(err, "--net %s: not a network (%s)", name, rn_net_names(names, sizeof names, 0));
    return rn_err_set(err, "--joints %s: %s runs the joints of Human36M (18) or MuCo (21)", joints ? joints : "",
                      name);
}
