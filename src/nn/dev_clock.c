#include "nn/dev_clock.h"

#include <string.h>

static int mark(void *ctx)
{
    rn_dev_clock *c = ctx;
    if (c->used >= c->n) return -1;
    c->dev->ops->event_record(c->dev, c->ev, c->used);
    return c->used++;
}

static double seconds(void *ctx, int a, int b)
{
    rn_dev_clock *c = ctx;
    return 1e-3 * c->dev->ops->event_elapsed_ms(c->dev, c->ev, a, b);
}

static void restart(void *ctx) { ((rn_dev_clock *)ctx)->used = 0; }

int rn_dev_clock_init(rn_dev_clock *c, rn_device *dev, int n)
{
    memset(c, 0, sizeof *c);
    const rn_device_ops *op = dev->ops;
    if (!op->events_create || !op->event_record || !op->event_elapsed_ms || n < 2) return -1;
    c->ev = op->events_create(dev, n);
    if (!c->ev) return -1;
    rn_device_retain(dev);
    c->dev = dev, c->n = n;
    return 0;
}

void rn_dev_clock_free(rn_dev_clock *c)
{
    if (!c->dev) return;
    if (c->dev->ops->events_destroy) c->dev->ops->events_destroy(c->dev, c->ev);
    rn_device_destroy(c->dev);
    memset(c, 0, sizeof *c);
}

rn_prof_clock rn_dev_clock_get(rn_dev_clock *c) { return (rn_prof_clock){c, mark, seconds, restart}; }
