/* A device library loaded at run time (librootnet-cuda.so): the one symbol it
 * exports, which the registry (nn/device.c) reads after dlopen.
 *
 *   const rn_device_lib *lib = dlsym(handle, RN_DEVICE_LIB_SYMBOL);
 *   if (lib->abi != RN_DEVICE_LIB_ABI || lib->ops_size != sizeof(rn_device_ops)) ...;  // another build
 *   lib->create(&dev, 0, threads, &err);                                                // GPU 0
 *
 * The library carries its own copy of the few core functions it uses (hidden),
 * so it depends on nothing of the program that loads it but this struct and
 * nn/device.h's types. Bump RN_DEVICE_LIB_ABI with every change to nn/device.h's
 * structs or op table that keeps sizeof(rn_device_ops).
 */
#ifndef RN_NN_DEVICE_LIB_H
#define RN_NN_DEVICE_LIB_H

#include <stddef.h>

#include "nn/device.h"

#define RN_DEVICE_LIB_ABI 2
#define RN_DEVICE_LIB_SYMBOL "rn_cuda_device_lib"

typedef struct rn_device_lib {
    int abi;         /* RN_DEVICE_LIB_ABI of the build */
    size_t ops_size; /* sizeof(rn_device_ops) of the build */
    /* Opens GPU `ordinal`; 0, or -1 with one line in err (no driver, no device, out of range). */
    int (*create)(rn_device **out, int ordinal, int threads, rn_err *err);
} rn_device_lib;

#endif
