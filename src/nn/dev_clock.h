/* rn_dev_clock: a device's events as the profiler's clock (core/profile.h's
 * rn_prof_clock), so that `--profile` times each layer on the device instead
 * of waiting for it after every span.
 *
 *   rn_dev_clock c;
 *   if (!rn_dev_clock_init(&c, dev, 8192)) {            // -1: the device has no events (cpu, ref)
 *       rn_prof_clock pc = rn_dev_clock_get(&c);
 *       rn_profile_set_clock(&prof, &pc);
 *   }
 *   ... steps ...
 *   rn_dev_clock_free(&c);                              // after the last rn_profile_step_done
 */
#ifndef RN_NN_DEV_CLOCK_H
#define RN_NN_DEV_CLOCK_H

#include "core/profile.h"
#include "nn/device.h"

typedef struct rn_dev_clock {
    rn_device *dev; /* held (rn_device_retain) until rn_dev_clock_free */
    void *ev;       /* dev's events_create(n) */
    int n, used;
} rn_dev_clock;

/* n timestamps per step on dev; -1 when dev has no events or they cannot be made. */
int rn_dev_clock_init(rn_dev_clock *c, rn_device *dev, int n);
void rn_dev_clock_free(rn_dev_clock *c);
rn_prof_clock rn_dev_clock_get(rn_dev_clock *c);

#endif
