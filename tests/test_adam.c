/* Adam against values worked out by hand from the published update rule
 * (Kingma & Ba; PyTorch's torch.optim.Adam, no weight decay):
 *   m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
 *   p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
 */
#include <math.h>

#include "check.h"
#include "devices.h"
#include "optim/adam.h"

static int close_to(double a, double b, double rel) { return fabs(a - b) <= rel * fabs(b) + 1e-12; }

/* The hand-worked steps on dev: its adam op on host arrays (cpu and ref have host memory). */
static void test_adam_on(rn_device *dev)
{
    const char *d = dev->name;
    float p[3] = {1.0f, -2.0f, 0.5f}, g[3] = {0.5f, -1e-3f, 0.0f}, m[3] = {0}, v[3] = {0};
    rn_adam opt = rn_adam_default(0.1);
    rn_adam_step(&opt, dev, p, g, m, v, 3);
    /* Step 1: m-hat = g, v-hat = g^2, so p -= lr * g / (|g| + eps). */
    RN_CHECK(close_to(p[0], 1.0 - 0.1 * 0.5 / (0.5 + 1e-8), 1e-6), "%s: step 1 p[0] = %.9g", d, p[0]);
    RN_CHECK(close_to(p[1], -2.0 + 0.1 * 1e-3 / (1e-3 + 1e-8), 1e-6), "%s: step 1 p[1] = %.9g", d, p[1]);
    RN_CHECK(p[2] == 0.5f && m[2] == 0 && v[2] == 0, "%s: zero gradient leaves the weight and moments", d);
    RN_CHECK(close_to(m[0], 0.05, 1e-6) && close_to(v[0], 0.00025, 1e-6), "%s: step 1 moments %g %g", d, m[0], v[0]);
    /* Step 2 with g = -0.25 on p[0]: m = 0.9*0.05 - 0.025 = 0.02,
     * v = 0.999*0.00025 + 0.001*0.0625 = 0.00031225, bc1 = 0.19, bc2 = 0.001999. */
    float g2[3] = {-0.25f, 0.0f, 0.0f};
    double p0 = p[0];
    rn_adam_step(&opt, dev, p, g2, m, v, 3);
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
    for (int i = 0; i < n; i++) {
        RN_CHECK(dev[i]->host_memory, "%s: host memory (this test passes host arrays)", dev[i]->name);
        if (dev[i]->host_memory) test_adam_on(dev[i]);
    }
    rn_test_devices_close(dev, n);
    RN_CHECK_DONE();
}
