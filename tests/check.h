/* Minimal test harness. Each test binary ends with RN_CHECK_DONE(), which
 * prints "N passed, N failed" and returns non-zero on any failure.
 *
 *   int main(void) { RN_CHECK(1 + 1 == 2, "arithmetic"); RN_CHECK_DONE(); }
 */
#ifndef RN_TESTS_CHECK_H
#define RN_TESTS_CHECK_H

#include <stdio.h>

static int rn_check_passed, rn_check_failed;

#define RN_CHECK(cond, ...)                                                      \
    do {                                                                         \
        if (cond) {                                                              \
            rn_check_passed++;                                                   \
        } else {                                                                 \
            rn_check_failed++;                                                   \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                 \
            fprintf(stderr, __VA_ARGS__);                                        \
            fprintf(stderr, "\n");                                               \
        }                                                                        \
    } while (0)

#define RN_CHECK_DONE()                                                          \
    do {                                                                         \
        printf("%d passed, %d failed\n", rn_check_passed, rn_check_failed);     \
        return rn_check_failed ? 1 : 0;                                          \
    } while (0)

#endif
