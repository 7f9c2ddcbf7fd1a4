/* The device registry (nn/device.h): names to the backends built in. */
#include "nn/device.h"

#include <string.h>

typedef struct entry {
    const char *name;
    int (*create)(rn_device **out, int threads, rn_err *err);
} entry;

static const entry DEVICES[] = {
#ifdef RN_HAVE_CPU
    {"cpu", rn_cpu_device_create},
#endif
#ifdef RN_HAVE_REF
    {"ref", rn_ref_device_create},
    {"ref-guard", rn_ref_guard_device_create}, /* tests only: not in rn_device_names */
#endif
    {NULL, NULL},
};

const char *rn_device_names(void)
{
    return ""
#ifdef RN_HAVE_CPU
           "cpu"
#endif
#if defined(RN_HAVE_CPU) && defined(RN_HAVE_REF)
           " "
#endif
#ifdef RN_HAVE_REF
           "ref"
#endif
        ;
}

const char *rn_device_default(void) { return DEVICES[0].name ? DEVICES[0].name : "cpu"; }

int rn_device_create(rn_device **out, const char *name, int threads, rn_err *err)
{
    *out = NULL;
    name = name ? name : rn_device_default();
    for (const entry *e = DEVICES; e->name; e++)
        if (!strcmp(e->name, name)) return e->create(out, threads, err);
    const char *names = rn_device_names();
    return rn_err_set(err, "device '%s' is not built in (%s%s)", name, names[0] ? "built in: " : "no device is built in",
                      names);
}

void rn_device_destroy(rn_device *dev)
{
    if (!dev) return;
    if (dev->refs > 0) {
        dev->refs--;
        return;
    }
    dev->ops->destroy(dev);
}

void rn_device_retain(rn_device *dev)
{
    RN_ASSERT(dev && dev->refs >= 0);
    dev->refs++;
}
