/* rootnet: RootNet (Moon et al., ICCV 2019) trained, evaluated and run natively. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"

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
    {"demo", rn_cmd_demo, "roots of people in one image from their boxes; draws them"},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: rootnet <command> [flags]   (rootnet <command> --help for its flags)\ncommands:\n");
    for (const command *c = COMMANDS; c->name; c++) fprintf(f, "  %-10s %s\n", c->name, c->help);
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (const command *c = COMMANDS; c->name; c++)
        if (!strcmp(argv[1], c->name)) return c->run(argc, argv);
    fprintf(stderr, "rootnet: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
