#include "cli/commands.h"
int rn_cmd_demo(int argc, char **argv) { (void)argc; (void)argv; return 2; }
