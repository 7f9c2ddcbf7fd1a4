/* rootnet: RootNet (Moon et al., ICCV 2019) trained, evaluated and run natively. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/exit.h"
#include "core/cpu_isa.h"
#include "nn/device.h"

#ifndef RN_VERSION
#define RN_VERSION "0.1.0" /* the Makefile passes git describe's version when it can */
#endif

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} command;

static const command COMMANDS[] = {
    {"forward", rn_cmd_forward, "forward pass on .npy inputs, writes (N,3) coords"},
    {"step", rn_cmd_step, "training steps on .npy inputs (loss, grads, Adam)"},
    {"bench", rn_cmd_bench, "time training or inference steps, prints JSON"},
    {"convert", rn_cmd_convert, "weights (.pth, snapshot, torchvision ResNet) to safetensors"},
    {"train", rn_cmd_train, "train RootNet (the authors' train.py): snapshots, resume, logs, loss plot"},
    {"evaluate", rn_cmd_evaluate, "AP_root / MRPE of a result JSON against ground truth"},
    {"synth", rn_cmd_synth, "write a synthetic dataset (muco, mupots, h36m layouts)"},
    {"dataset", rn_cmd_dataset, "load an annotation set (readers + cache), summary or CSV dump"},
    {"inspect", rn_cmd_inspect, "print one sample record as JSON and write its input patch"},
    {"test", rn_cmd_test, "run a snapshot on a test set: result JSON + AP_root / MRPE"},
    {"calibrate", rn_cmd_calibrate, "int8: the ranges of a snapshot's conv inputs over a test set (SNAPSHOT.int8)"},
    {"export", rn_cmd_export, "a snapshot as ONNX (--onnx) and/or the authors' .pth.tar (--pth)"},
    {"demo", rn_cmd_demo, "roots of people in one image from their boxes; draws them"},
    {"predict", rn_cmd_predict, "roots of every detected person over many images (any detector's boxes)"},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: rootnet <command> [flags]   (rootnet <command> --help or rootnet help <command> for its "
               "flags; rootnet --version)\ncommands:\n");
    for (const command *c = COMMANDS; c->name; c++) fprintf(f, "  %-10s %s\n", c->name, c->help);
}

static const command *find_command(const char *name)
{
    for (const command *c = COMMANDS; c->name; c++)
        if (!strcmp(name, c->name)) return c;
    return NULL;
}

/* A command's output is only delivered once stdout is flushed: a failed write
 * (a full disk, `> /dev/full`, a closed pipe) turns a success into exit 1. */
static int flush_stdout(int rc, const char *name)
{
    if (fflush(stdout) == 0 && !ferror(stdout)) return rc;
    fprintf(stderr, "rootnet %s: error writing standard output: %s\n", name, strerror(errno));
    return rc ? rc : 1;
}

static int is_help(const char *a) { return !strcmp(a, "--help") || !strcmp(a, "-h") || !strcmp(a, "help"); }

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return RN_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--version")) {
        rn_cpu_isa isa;
        char line[128];
        rn_cpu_isa_detect(&isa);
        printf("rootnet %s (devices: %s)\ncpu: %s: %s\n", RN_VERSION, rn_device_names(), isa.model,
               rn_cpu_isa_line(&isa, line, sizeof line));
        return flush_stdout(0, "--version");
    }
    const command *c = find_command(is_help(argv[1]) && argc > 2 ? argv[2] : argv[1]);
    if (c && is_help(argv[1])) /* rootnet help CMD: rootnet CMD --help */
        return flush_stdout(c->run(3, (char *[]){argv[0], argv[2], "--help", NULL}), c->name);
    if (c) return flush_stdout(c->run(argc, argv), c->name);
    if (is_help(argv[1]) && argc == 2) {
        usage(stdout);
        return flush_stdout(0, "help");
    }
    fprintf(stderr, "rootnet: unknown command '%s'\n", argv[argc > 2 && is_help(argv[1]) ? 2 : 1]);
    usage(stderr);
    return RN_EXIT_USAGE;
}
