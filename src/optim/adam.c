#include "optim/adam.h"

#include <math.h>

rn_adam rn_adam_default(double lr) { return (rn_adam){.lr = lr, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8}; }

void rn_adam_step(rn_adam *opt, float *param, const float *grad, float *m, float *v, size_t n)
{
    opt->step++;
    double bc1 = 1.0 - pow(opt->beta1, (double)opt->step);
    double bc2 = 1.0 - pow(opt->beta2, (double)opt->step);
    /* PyTorch's single-tensor Adam, with its scalars rounded to float as its kernels do. */
    const float b1 = (float)opt->beta1, b2 = (float)opt->beta2;
    const float a1 = (float)(1.0 - opt->beta1), a2 = (float)(1.0 - opt->beta2);
    const float step_size = (float)(opt->lr / bc1), bc2_sqrt = (float)sqrt(bc2), eps = (float)opt->eps;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        float g = grad[i];
        float mi = m[i] * b1 + a1 * g;
        float vi = v[i] * b2 + a2 * g * g;
        m[i] = mi;
        v[i] = vi;
        float denom = sqrtf(vi) / bc2_sqrt + eps;
        param[i] = param[i] + (-step_size * mi) / denom;
    }
}
