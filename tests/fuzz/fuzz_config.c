/* libFuzzer target: the train config file (rn_train_cfg_read, then the
 * cross-field check, the schedule, and formatting): a config that passes the
 * check must read back from its own formatted text unchanged. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"
#include "train/config.h"

static int read_text(rn_train_cfg *c, const char *text, size_t len, FILE *warn, rn_err *err)
{
    FILE *f = fmemopen((void *)text, len, "r");
    RN_ASSERT(f);
    int rc = rn_train_cfg_read(c, f, FUZZ_NAME, warn, err);
    fclose(f);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    FILE *warn = fopen("/dev/null", "w");
    RN_ASSERT(warn);
    rn_train_cfg c;
    rn_train_cfg_default(&c);
    rn_err err = {{0}};
    int rc = read_text(&c, (const char *)data, size, warn, &err);
    fuzz_check_err(rc, &err);
    if (!rc) {
        rc = rn_train_cfg_check(&c, &err);
        fuzz_check_err(rc, &err);
    }
    if (!rc) {
        for (int e = 0; e <= c.end_epoch && e < 64; e++) (void)rn_train_lr(&c, e);
        static const size_t len = 1 << 16;
        char *text = malloc(len), *again = malloc(len);
        rn_train_cfg_format(&c, text, len);
        rn_train_cfg back;
        rn_train_cfg_default(&back);
        RN_ASSERT(read_text(&back, text, strlen(text), NULL, &err) == 0);
        rn_train_cfg_format(&back, again, len);
        RN_ASSERT(strcmp(text, again) == 0);
        free(text);
        free(again);
    }
    fclose(warn);
    return 0;
}
