/* The device registry (nn/device.h): names to the backends built in, and the
 * CUDA device, loaded at run time from librootnet-cuda.so beside the binary
 * (or beside librootnet.so when the C API is a shared library). */
#include "nn/device.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifdef RN_HAVE_CUDA
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include "nn/device_lib.h"
#endif

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
#if defined(RN_HAVE_CUDA) && (defined(RN_HAVE_CPU) || defined(RN_HAVE_REF))
           " "
#endif
#ifdef RN_HAVE_CUDA
           "cuda"
#endif
        ;
}

const char *rn_device_default(void) { return DEVICES[0].name ? DEVICES[0].name : "cpu"; }

#ifdef RN_HAVE_CUDA
/* GPU ordinal of "cuda" (0) or "cuda:N"; -1 when name is neither. */
static int cuda_ordinal(const char *name)
{
    if (!strcmp(name, "cuda")) return 0;
    if (strncmp(name, "cuda:", 5) || name[5] < '0' || name[5] > '9') return -1;
    char *end;
    errno = 0;
    long n = strtol(name + 5, &end, 10);
    return *end || errno || n > INT_MAX ? -1 : (int)n;
}

/* path = the folder of the object holding this code (the binary, or librootnet.so) + "/" + file. */
static int beside_me(char *path, size_t size, const char *file)
{
    Dl_info info;
    struct link_map *map = NULL;
    char self[PATH_MAX];
    const char *me = NULL;
    if (dladdr1((void *)beside_me, &info, (void **)&map, RTLD_DL_LINKMAP) && map && map->l_name[0])
        me = map->l_name;
    else {
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0) return -1;
        self[n] = 0;
        me = self;
    }
    const char *slash = strrchr(me, '/');
    int dir = slash ? (int)(slash - me) : 1;
    int n = snprintf(path, size, "%.*s/%s", dir, slash ? me : ".", file);
    return n > 0 && (size_t)n < size ? 0 : -1;
}

/* One line for a failed dlopen: the library itself, or one it needs, is missing. */
static int cuda_load_error(rn_err *err, const char *path, const char *why)
{
    if (access(path, F_OK))
        return rn_err_set(err, "device cuda: library missing: %s (this rootnet was built with the CUDA device; "
                               "keep librootnet-cuda.so beside the binary)", path);
    if (strstr(why, "libcudnn"))
        return rn_err_set(err, "device cuda: libcudnn missing (cuDNN 9; add its folder to LD_LIBRARY_PATH): %s", why);
    if (strstr(why, "libnccl"))
        return rn_err_set(err, "device cuda: libnccl missing (NCCL 2; add its folder to LD_LIBRARY_PATH): %s", why);
    if (strstr(why, "libcublas"))
        return rn_err_set(err, "device cuda: libcublas missing (add its folder to LD_LIBRARY_PATH): %s", why);
    return rn_err_set(err, "device cuda: cannot load %s: %s", path, why);
}

static int cuda_create(rn_device **out, int ordinal, int threads, rn_err *err)
{
    char path[PATH_MAX + 32], installed[PATH_MAX + 32];
    if (beside_me(path, sizeof path, "librootnet-cuda.so"))
        return rn_err_set(err, "device cuda: cannot find the folder of this program");
    /* installed: bin/rootnet finds it in lib/ (make install) */
    if (access(path, F_OK) && !beside_me(installed, sizeof installed, "../lib/librootnet-cuda.so") &&
        !access(installed, F_OK))
        memcpy(path, installed, sizeof path);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) return cuda_load_error(err, path, dlerror());
    const rn_device_lib *lib = dlsym(h, RN_DEVICE_LIB_SYMBOL);
    if (!lib) {
        dlclose(h);
        return rn_err_set(err, "device cuda: %s is not a rootnet device library (no %s): rebuild it", path,
                          RN_DEVICE_LIB_SYMBOL);
    }
    if (lib->abi != RN_DEVICE_LIB_ABI || lib->ops_size != sizeof(rn_device_ops)) {
        int abi = lib->abi;
        dlclose(h);
        return rn_err_set(err, "device cuda: %s was built for another rootnet (device ABI %d, this one %d): rebuild both",
                          path, abi, RN_DEVICE_LIB_ABI);
    }
    if (lib->create(out, ordinal, threads, err)) {
        dlclose(h);
        return -1;
    }
    return 0; /* the library stays loaded: the device's ops live in it */
}
#endif

int rn_device_create(rn_device **out, const char *name, int threads, rn_err *err)
{
    *out = NULL;
    name = name ? name : rn_device_default();
#ifdef RN_HAVE_CUDA
    int ordinal = cuda_ordinal(name);
    if (ordinal >= 0) return cuda_create(out, ordinal, threads, err);
    if (!strncmp(name, "cuda", 4)) return rn_err_set(err, "device '%s': expected cuda or cuda:N (N: the GPU's number)", name);
#endif
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

static const char *const OP_NAMES[RN_OP_COUNT] = {
#define RN_DEVICE_ENTRY(ret, name, params, args) #name,
#include "nn/device_ops.inc"
};

const char *rn_device_op_name(int i) { return i >= 0 && i < RN_OP_COUNT ? OP_NAMES[i] : NULL; }

int rn_device_op_has(const rn_device_ops *ops, int i)
{
    switch (i) {
#define RN_DEVICE_ENTRY(ret, name, params, args)                                                                       \
    case RN_OP_##name:                                                                                                 \
        return ops->name != NULL;
#include "nn/device_ops.inc"
    default:
        return 0;
    }
}
