build-m/src/cli/cmd_convert.o: src/cli/cmd_convert.c src/cli/args.h \
 src/core/status.h src/cli/commands.h src/cli/exit.h src/nn/weights.h \
 src/core/rng.h src/io/tensors.h src/core/bf16.h src/nn/params.h
src/cli/args.h:
src/core/status.h:
src/cli/commands.h:
src/cli/exit.h:
src/nn/weights.h:
src/core/rng.h:
src/io/tensors.h:
src/core/bf16.h:
src/nn/params.h:
