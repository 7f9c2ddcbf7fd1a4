/* The subcommands of the rootnet program. Each takes the full argv (argv[1] is
 * its own name), prints its own errors, and returns the process exit code. */
#ifndef RN_CLI_COMMANDS_H
#define RN_CLI_COMMANDS_H

int rn_cmd_forward(int argc, char **argv);
int rn_cmd_step(int argc, char **argv);
int rn_cmd_bench(int argc, char **argv);
int rn_cmd_convert(int argc, char **argv);
int rn_cmd_train(int argc, char **argv);
int rn_cmd_evaluate(int argc, char **argv);
int rn_cmd_synth(int argc, char **argv);
int rn_cmd_dataset(int argc, char **argv);
int rn_cmd_inspect(int argc, char **argv);
int rn_cmd_test(int argc, char **argv);
/* rootnet calibrate: over a test set (test's flags), or with --boxes over photos (predict's flags). */
int rn_cmd_calibrate(int argc, char **argv);
/* predict's flags and run; calibrate = 1: rootnet calibrate --boxes. */
int rn_cmd_predict_main(int argc, char **argv, int calibrate);
int rn_cmd_demo(int argc, char **argv);
int rn_cmd_export(int argc, char **argv);
int rn_cmd_predict(int argc, char **argv);

#endif
