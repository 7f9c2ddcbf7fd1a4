/* --snapshot / --epoch N --output DIR -> one weights file. */
#include "cli/snapshot_path.h"

#include <string.h>
#include <sys/stat.h>

static int is_file(const char *p)
{
    struct stat st;
    return !stat(p, &st) && S_ISREG(st.st_mode);
}

static int by_epoch(char *path, size_t len, const char *output, long epoch, rn_err *err)
{
    static const char *const forms[] = {"%s/snapshot_%ld.safetensors", "%s/model_dump/snapshot_%ld.safetensors",
                                        "%s/snapshot_%ld.pth.tar", "%s/model_dump/snapshot_%ld.pth.tar"};
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        int n = snprintf(path, len, forms[i], output, epoch);
        if (n < 0 || (size_t)n >= len) return rn_err_set(err, "--output '%s': path too long", output);
        if (is_file(path)) return 0;
    }
    return rn_err_set(err, "no snapshot of epoch %ld under '%s' (looked for snapshot_%ld.safetensors, .pth.tar)",
                      epoch, output, epoch);
}

int rn_snapshot_resolve(char *path, size_t len, const char *snapshot, const char *output, long epoch, rn_err *err)
{
    if (snapshot && epoch >= 0) return rn_err_set(err, "give either --snapshot or --epoch, not both");
    if (epoch >= 0) {
        if (!output) return rn_err_set(err, "--epoch needs --output DIR (the training output dir)");
        return by_epoch(path, len, output, epoch, err);
    }
    if (!snapshot) return rn_err_set(err, "--snapshot FILE (or --epoch N --output DIR) is required");
    if (strlen(snapshot) >= len) return rn_err_set(err, "--snapshot: path too long");
    if (!is_file(snapshot)) return rn_err_set(err, "--snapshot '%s': no such file", snapshot);
    memcpy(path, snapshot, strlen(snapshot) + 1);
    return 0;
}
