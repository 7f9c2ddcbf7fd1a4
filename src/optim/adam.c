#include "optim/adam.h"

rn_adam rn_adam_default(double lr) { return (rn_adam){.lr = lr, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8}; }

void rn_adam_step(rn_adam *opt, rn_device *dev, float *param, const float *grad, float *m, float *v, size_t n,
                  const int *finite)
{
    opt->step++;
    rn_adam_args h = {.lr = opt->lr, .beta1 = opt->beta1, .beta2 = opt->beta2, .eps = opt->eps, .step = opt->step,
                      .finite = finite};
    dev->ops->adam(dev, param, grad, m, v, n, &h);
}

void rn_adam_unstep(rn_adam *opt)
{
    RN_ASSERT(opt->step > 0);
    opt->step--;
}
