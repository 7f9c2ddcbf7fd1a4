/* Checks shared by the targets that read a list of tensors (safetensors, torch.save). */
#ifndef RN_TESTS_FUZZ_TENSORS_H
#define RN_TESTS_FUZZ_TENSORS_H

#include <stdlib.h>

#include "fuzz.h"
#include "io/tensors.h"

/* Every tensor's size agrees with its shape and dtype, is readable, is found by
 * name, and a float tensor converts to float32. */
static inline void fuzz_check_tensors(const rn_tensors *ts)
{
    for (int i = 0; i < ts->n; i++) {
        const rn_tensor *t = &ts->t[i];
        size_t numel = (size_t)rn_tensor_numel(t);
        RN_ASSERT(t->nbytes == numel * rn_dtype_size(t->dtype));
        fuzz_touch(t->data, t->nbytes);
        RN_ASSERT(rn_tensors_find(ts, t->name) != NULL);
        if (!rn_dtype_is_float(t->dtype)) continue;
        float *f = malloc(numel * sizeof *f + 1);
        rn_err err = {{0}};
        RN_ASSERT(rn_tensor_to_f32(f, t, numel, &err) == 0);
        free(f);
    }
}

/* Runs a file-image parser of the rn_safetensors_parse / rn_pth_parse kind and checks its result. */
static inline int fuzz_tensors(int (*parse)(rn_tensors *, const uint8_t *, size_t, const char *, rn_err *),
                               const uint8_t *data, size_t size)
{
    rn_err err = {{0}};
    rn_tensors ts;
    int rc = parse(&ts, data, size, FUZZ_NAME, &err);
    fuzz_check_err(rc, &err);
    if (!rc) fuzz_check_tensors(&ts);
    rn_tensors_free(&ts);
    return 0;
}

#endif
