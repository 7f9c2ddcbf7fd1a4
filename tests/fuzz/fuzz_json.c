/* libFuzzer target: the annotation JSON parser (rn_jdoc_parse) and its accessors. */
#include <stdlib.h>

#include "data/json/json.h"
#include "fuzz.h"

/* Visits every node, looking each object member up by key (through the hash index of big objects). */
static void walk(const rn_jnode *v)
{
    if (rn_jis_string(v)) RN_ASSERT(strlen(rn_jstr(v)) <= v->n);
    if (rn_jis_array(v))
        for (size_t i = 0; i < rn_jarray_size(v); i++) walk(rn_jarray_get(v, i));
    if (!rn_jis_object(v)) return;
    for (uint32_t i = 0; i < v->n; i++) {
        const rn_jnode *key = v->u.kids[2 * i];
        RN_ASSERT(rn_jis_string(key));
        RN_ASSERT(rn_jobject_get(v, rn_jstr(key)) != NULL);
        walk(v->u.kids[2 * i + 1]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rn_err err = {{0}};
    rn_jdoc *d = rn_jdoc_parse((const char *)data, size, FUZZ_NAME, &err);
    fuzz_check_err(d == NULL, &err);
    if (d) walk(d->root);
    rn_jdoc_free(d);
    return 0;
}
