/* The devices built into this test binary (nn/device.h), for tests that run
 * on each of them: every name of rn_device_names(), plus ref-guard (ref's numbers
 * behind memory the host cannot touch) where ref is built. A device that is built
 * but cannot open here (cuda without a GPU) is reported as skipped.
 *
 *   rn_device *dev[RN_TEST_MAX_DEVICES];
 *   int n = rn_test_devices_open(dev, 2);
 *   for (int i = 0; i < n; i++) { ... dev[i]->name ... }
 *   rn_test_devices_close(dev, n);
 */
#ifndef RN_TESTS_DEVICES_H
#define RN_TESTS_DEVICES_H

#include <stdio.h>
#include <string.h>

#include "nn/device.h"

#define RN_TEST_MAX_DEVICES 6

/* Opens every built-in device with `threads` threads; returns how many. */
static inline int rn_test_devices_open(rn_device *dev[RN_TEST_MAX_DEVICES], int threads)
{
    char names[96];
    snprintf(names, sizeof names, "%s%s", rn_device_names(), strstr(rn_device_names(), "ref") ? " ref-guard" : "");
    int n = 0;
    for (char *save = NULL, *t = strtok_r(names, " ", &save); t && n < RN_TEST_MAX_DEVICES;
         t = strtok_r(NULL, " ", &save)) {
        rn_err err = {{0}};
        if (rn_device_create(&dev[n], t, threads, &err)) printf("skipped: device %s: %s\n", t, err.msg);
        else n++;
    }
    return n;
}

static inline void rn_test_devices_close(rn_device *dev[RN_TEST_MAX_DEVICES], int n)
{
    for (int i = 0; i < n; i++) rn_device_destroy(dev[i]);
}

#endif
