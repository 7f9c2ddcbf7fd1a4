/* libFuzzer target: the zip reader (rn_zip_open, rn_zip_find on every entry). */
#include <stdlib.h>

#include "fuzz.h"
#include "io/zip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rn_err err = {{0}};
    rn_zip z;
    int rc = rn_zip_open(&z, data, size, FUZZ_NAME, &err);
    fuzz_check_err(rc, &err);
    if (rc) return 0;
    for (size_t i = 0; i < z.n; i++) {
        char *name = malloc(z.e[i].name_len + 1);
        memcpy(name, z.e[i].name, z.e[i].name_len);
        name[z.e[i].name_len] = '\0';
        const uint8_t *p = NULL;
        size_t n = 0;
        rc = rn_zip_find(&z, name, &p, &n, &err);
        fuzz_check_err(rc, &err);
        if (!rc) fuzz_touch(p, n);
        free(name);
    }
    rn_zip_close(&z);
    return 0;
}
