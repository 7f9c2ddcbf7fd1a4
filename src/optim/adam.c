#include "optim/adam.h"

#include <math.h>

rn_adam rn_adam_default(double lr) { return (rn_adam){.lr = lr, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8}; }

void rn_adam_next(rn_adam *opt, double sched[2])
{
    opt->step++;
    sched[0] = opt->lr / (1.0 - pow(opt->beta1, (double)opt->step));
    sched[1] = sqrt(1.0 - pow(opt->beta2, (double)opt->step));
}

void rn_adam_apply(const rn_adam *opt, rn_device *dev, float *param, const float *grad, float *m, float *v, size_t n,
                   const double *sched, const int *finite)
{
    rn_adam_args h = {.beta1 = opt->beta1, .beta2 = opt->beta2, .eps = opt->eps, .sched = sched, .finite = finite};
    dev->ops->adam(dev, param, grad, m, v, n, &h);
}

void rn_adam_step(rn_adam *opt, rn_device *dev, float *param, const float *grad, float *m, float *v, size_t n,
                  double *sched, const int *finite)
{
    double s[2];
    rn_adam_next(opt, s);
    dev->ops->upload(dev, sched, s, sizeof s);
    rn_adam_apply(opt, dev, param, grad, m, v, n, sched, finite);
}

void rn_adam_unstep(rn_adam *opt)
{
    RN_ASSERT(opt->step > 0);
    opt->step--;
}
