/* The devices built into this test binary (nn/device.h), for tests that run
 * on each of them.
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

#define RN_TEST_MAX_DEVICES 4

/* Opens every built-in device with `threads` threads; returns how many. */
static inline int rn_test_devices_open(rn_device *dev[RN_TEST_MAX_DEVICES], int threads)
{
    char names[64];
    snprintf(names, sizeof names, "%s", rn_device_names());
    int n = 0;
    for (char *save = NULL, *t = strtok_r(names, " ", &save); t && n < RN_TEST_MAX_DEVICES;
         t = strtok_r(NULL, " ", &save)) {
        rn_err err = {{0}};
        if (rn_device_create(&dev[n], t, threads, &err)) fprintf(stderr, "device %s: %s\n", t, err.msg);
        else n++;
    }
    return n;
}

static inline void rn_test_devices_close(rn_device *dev[RN_TEST_MAX_DEVICES], int n)
{
    for (int i = 0; i < n; i++) rn_device_destroy(dev[i]);
}

#endif
