/* Shared by the libFuzzer targets in tests/fuzz/ (see the README's Fuzzing
 * section): each target parses one input from memory with a library entry
 * point and checks the library's error contract, so that a parser which
 * fails without a message, or with more than one line, is a finding too.
 *
 *   int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
 *   {
 *       rn_err err = {{0}};
 *       int rc = rn_npy_parse(&t, data, size, FUZZ_NAME, &err);
 *       fuzz_check_err(rc, &err);
 *       ...
 *   }
 */
#ifndef RN_TESTS_FUZZ_H
#define RN_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/status.h"

/* The name every target gives its input (what messages must mention). */
#define FUZZ_NAME "fuzz-input"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A failed parse (rc != 0) must leave one non-empty line in err. */
static inline void fuzz_check_err(int rc, const rn_err *err)
{
    if (!rc) return;
    RN_ASSERT(err->msg[0] != '\0');
    RN_ASSERT(strchr(err->msg, '\n') == NULL);
}

/* Reads every byte of p so that ASan sees an access past a buffer the parser handed out. */
static inline unsigned fuzz_touch(const void *p, size_t n)
{
    unsigned s = 0;
    for (size_t i = 0; i < n; i++) s += ((const volatile uint8_t *)p)[i];
    return s;
}

#endif
