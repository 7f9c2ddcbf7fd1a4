/* Weights with their run's settings (run_settings.h). */
#include "nn/run_settings.h"

#include <stdio.h>

#include "io/keyval.h"
#include "nn/weights.h"

static int settings_pair(void *ctx, const char *key, const char *value, const char *name, int line, rn_err *err)
{
    (void)name, (void)line;
    rn_run_settings *s = ctx;
    if (rn_keyval_key_is(key, "input-size")) return rn_keyval_int(&s->input_size, value, "input-size", err);
    if (rn_keyval_key_is(key, "fast-decode")) return rn_keyval_bool(&s->fast_decode, value, "fast-decode", err);
    return 0;
}

int rn_run_settings_read(rn_run_settings *s, const rn_tensors *ts, const char *path, rn_err *err)
{
    *s = (rn_run_settings){.input_size = 256};
    const char *text = rn_tensors_get_meta(ts, "config");
    if (!text || !text[0]) return 0;
    rn_run_settings c = {.from_config = 1, .input_size = 256};
    char name[1100];
    snprintf(name, sizeof name, "%s: config metadata", path);
    if (rn_keyval_parse(text, name, settings_pair, &c, err)) return -1;
    if (!rn_input_size_ok(c.input_size))
        return rn_err_set(err, "%s: input-size %d is not a multiple of 32 in 32..2048", name, c.input_size);
    *s = c;
    return 0;
}

int rn_weights_load_run(rn_params *p, rn_run_settings *s, const char *path, int depth, rn_rng *rng, rn_err *err)
{
    rn_tensors ts;
    if (rn_tensors_load(&ts, path, err)) return -1;
    int rc = rn_run_settings_read(s, &ts, path, err);
    if (!rc) rc = rn_weights_from_tensors(p, &ts, path, depth, rng, err);
    rn_tensors_free(&ts);
    return rc;
}

int rn_run_settings_merge(rn_run_settings *s, int input_size, int fast_decode, const char *path, rn_err *err)
{
    if (input_size && s->from_config && input_size != s->input_size)
        return rn_err_set(err, "--input-size %d: %s was trained at %dx%d (its config); leave the flag out or give %d",
                          input_size, path, s->input_size, s->input_size, s->input_size);
    if (input_size) s->input_size = input_size;
    if (fast_decode) s->fast_decode = 1;
    s->size_default = !s->from_config && !input_size;
    return 0;
}

const char *rn_run_settings_size_note(const rn_run_settings *s)
{
    if (s->from_config) return "(the snapshot's config)";
    if (!s->size_default) return "(--input-size)";
    return "(a default: these weights carry no config; give --input-size N if they were trained at another size)";
}

int rn_weights_load_eval(rn_params *p, rn_run_settings *s, const char *path, int depth, int input_size,
                         int fast_decode, rn_err *err)
{
    rn_rng rng;
    rn_rng_seed(&rng, 1);
    if (rn_weights_load_run(p, s, path, depth, &rng, err)) return RN_WEIGHTS_ELOAD;
    if (!rn_run_settings_merge(s, input_size, fast_decode, path, err)) return 0;
    rn_params_free(p);
    return RN_WEIGHTS_EMERGE;
}
