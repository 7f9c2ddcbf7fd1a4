/* rn_run_settings: the weights of a file together with what the file says
 * about the run that made it, for every command that runs a network from
 * weights (test, predict, demo, export, the C API). Training writes the
 * settings (a snapshot's "config" metadata, train/snapshot.h); inference reads
 * them here, so neither depends on the other.
 *
 *   rn_params p; rn_run_settings s;
 *   int rc = rn_weights_load_eval(&p, &s, "snapshot_3.safetensors", 0, 0, 0, &err);
 *   if (rc == RN_WEIGHTS_EMERGE) ...usage error...; else if (rc) ...unreadable...;
 *   printf("input %d %s\n", s.input_size, rn_run_settings_size_note(&s));
 *   rn_params_free(&p);
 *
 * A rootnet snapshot carries its training config ("key = value" lines,
 * io/keyval.h); of it inference takes input-size and fast-decode (other keys
 * are training's and are not read here). Other files (the authors' .pth.tar,
 * converted or torchvision weights) carry no config and get the defaults.
 */
#ifndef RN_NN_RUN_SETTINGS_H
#define RN_NN_RUN_SETTINGS_H

#include "core/rng.h"
#include "core/status.h"
#include "io/tensors.h"
#include "nn/params.h"

/* The network input sizes every command takes: square, a multiple of 32 in RN_INPUT_MIN..RN_INPUT_MAX. */
enum { RN_INPUT_MIN = 32, RN_INPUT_MAX = 2048 };
static inline int rn_input_size_ok(long size) { return size >= RN_INPUT_MIN && size <= RN_INPUT_MAX && size % 32 == 0; }

typedef struct rn_run_settings {
    int from_config;  /* 1: the values below come from the file's "config" metadata */
    int input_size;   /* square network input (256 without a config) */
    int fast_decode;  /* JPEG fast decode (0 without a config) */
    int size_default; /* 1: input_size is the default 256 (no config, no --input-size) */
} rn_run_settings;

/* Where the input size came from, for a command's header line: "(the
 * snapshot's config)", "(--input-size)", or, for weights without a config,
 * that 256 is a default and how to change it. */
const char *rn_run_settings_size_note(const rn_run_settings *s);

/* The settings of tensors ts read from path (its "config" metadata, else the
 * defaults). A malformed config line, or an input-size or fast-decode value
 * that does not parse, is an error naming path; input-size must be a multiple
 * of 32 in 32..2048. */
int rn_run_settings_read(rn_run_settings *s, const rn_tensors *ts, const char *path, rn_err *err);
/* Puts a command's flags over the file's settings: input_size 0 keeps the
 * file's; a different one is refused when the file has a config (the network
 * was trained at that size), naming both. fast_decode 1 turns it on. */
int rn_run_settings_merge(rn_run_settings *s, int input_size, int fast_decode, const char *path, rn_err *err);

/* rn_weights_load (p built for the file's depth; depth != 0: the file must
 * hold it) plus the file's settings. Errors name the file. */
int rn_weights_load_run(rn_params *p, rn_run_settings *s, const char *path, int depth, rn_rng *rng, rn_err *err);
/* Weights for inference: rn_weights_load_run (init RNG seeded with 1 for what
 * the file lacks) then rn_run_settings_merge of the command's input_size and
 * fast_decode. 0 (p built: free it), RN_WEIGHTS_ELOAD (the file cannot be read
 * or is no RootNet) or RN_WEIGHTS_EMERGE (the flags contradict the file), each
 * with err set and p not held. */
#define RN_WEIGHTS_ELOAD (-1)
#define RN_WEIGHTS_EMERGE (-2)
int rn_weights_load_eval(rn_params *p, rn_run_settings *s, const char *path, int depth, int input_size,
                         int fast_decode, rn_err *err);

#endif
