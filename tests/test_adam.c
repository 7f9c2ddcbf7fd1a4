/* Adam against values worked out by hand from the published update rule
 * (Kingma & Ba; PyTorch's torch.optim.Adam, no weight decay):
 *   m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
 *   p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
 */
#include <math.h>
#include <string.h>

#include "check.h"
#include "devices.h"
#include "optim/adam.h"

static int close_to(double a, double b, double rel) { return fabs(a - b) <= rel * fabs(b) + 1e-12; }

/* n floats of host array h as a buffer of dev. */
static float *dev_copy(rn_device *dev, const float *h, size_t n)
{
    float *d = dev->ops->alloc(dev, n * sizeof *d);
    dev->ops->upload(dev, d, h, n * sizeof *d);
    return d;
}

/* One Adam step on dev's buffers of the host arrays p, g, m, v (3 each), finite: NULL or a
 * flag value put in device memory; the results come back into the host arrays. */
static void step_on(rn_device *dev, rn_adam *opt, float *p, const float *g, float *m, float *v, const int *finite)
{
    float *dp = dev_copy(dev, p, 3), *dg = dev_copy(dev, g, 3), *dm = dev_copy(dev, m, 3), *dv = dev_copy(dev, v, 3);
    int *df = NULL;
    if (finite) {
        df = dev->ops->alloc(dev, sizeof *df);
        dev->ops->upload(dev, df, finite, sizeof *df);
    }
    double *sched = dev->ops->alloc(dev, 2 * sizeof *sched);
    rn_adam_step(opt, dev, dp, dg, dm, dv, 3, sched, df);
    dev->ops->free(dev, sched);
    dev->ops->download(dev, p, dp, 3 * sizeof *p);
    dev->ops->download(dev, m, dm, 3 * sizeof *m);
    dev->ops->download(dev, v, dv, 3 * sizeof *v);
    dev->ops->free(dev, dp), dev->ops->free(dev, dg), dev->ops->free(dev, dm), dev->ops->free(dev, dv);
    dev->ops->free(dev, df);
}

/* The hand-worked steps on dev, through its memory (host arrays copied in and out). */
static void test_adam_on(rn_device *dev)
{
    const char *d = dev->name;
    float p[3] = {1.0f, -2.0f, 0.5f}, g[3] = {0.5f, -1e-3f, 0.0f}, m[3] = {0}, v[3] = {0};
    rn_adam opt = rn_adam_default(0.1);
    step_on(dev, &opt, p, g, m, v, NULL);
    /* Step 1: m-hat = g, v-hat = g^2, so p -= lr * g / (|g| + eps). */
    RN_CHECK(close_to(p[0], 1.0 - 0.1 * 0.5 / (0.5 + 1e-8), 1e-6), "%s: step 1 p[0] = %.9g", d, p[0]);
    RN_CHECK(close_to(p[1], -2.0 + 0.1 * 1e-3 / (1e-3 + 1e-8), 1e-6), "%s: step 1 p[1] = %.9g", d, p[1]);
    RN_CHECK(p[2] == 0.5f && m[2] == 0 && v[2] == 0, "%s: zero gradient leaves the weight and moments", d);
    RN_CHECK(close_to(m[0], 0.05, 1e-6) && close_to(v[0], 0.00025, 1e-6), "%s: step 1 moments %g %g", d, m[0], v[0]);
    /* A step whose device flag says overflow writes nothing; the caller undoes the count. */
    float g_inf[3] = {INFINITY, 1.0f, 1.0f}, keep[9];
    memcpy(keep, p, sizeof p), memcpy(keep + 3, m, sizeof m), memcpy(keep + 6, v, sizeof v);
    const int overflow = 0;
    step_on(dev, &opt, p, g_inf, m, v, &overflow);
    rn_adam_unstep(&opt);
    RN_CHECK(!memcmp(keep, p, sizeof p) && !memcmp(keep + 3, m, sizeof m) && !memcmp(keep + 6, v, sizeof v),
             "%s: a step flagged non-finite leaves weights and moments", d);
    /* Step 2 with g = -0.25 on p[0]: m = 0.9*0.05 - 0.025 = 0.02,
     * v = 0.999*0.00025 + 0.001*0.0625 = 0.00031225, bc1 = 0.19, bc2 = 0.001999. */
    float g2[3] = {-0.25f, 0.0f, 0.0f};
    double p0 = p[0];
    const int clean = 1;
    step_on(dev, &opt, p, g2, m, v, &clean);
    double mhat = 0.02 / 0.19, vhat = 0.00031225 / 0.001999;
    double want = p0 - 0.1 * mhat / (sqrt(vhat) + 1e-8);
    RN_CHECK(close_to(m[0], 0.02, 1e-5) && close_to(v[0], 0.00031225, 1e-5), "%s: step 2 moments %g %g", d, m[0],
             v[0]);
    RN_CHECK(close_to(p[0], want, 1e-6), "%s: step 2 p[0] = %.9g, want %.9g", d, p[0], want);
    RN_CHECK(opt.step == 2, "%s: step counter %ld", d, opt.step);
}

int main(void)
{
    rn_device *dev[RN_TEST_MAX_DEVICES];
    int n = rn_test_devices_open(dev, 2);
    RN_CHECK(n > 0, "a device is built in");
    for (int i = 0; i < n; i++) test_adam_on(dev[i]);
    rn_test_devices_close(dev, n);
    RN_CHECK_DONE();
}
