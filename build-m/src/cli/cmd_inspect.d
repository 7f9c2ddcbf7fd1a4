build-m/src/cli/cmd_inspect.o: src/cli/cmd_inspect.c src/cli/args.h \
 src/core/status.h src/cli/commands.h src/cli/data_flags.h \
 src/data/augment.h src/core/rng.h src/data/image.h src/data/sample.h \
 src/io/file.h src/io/tensors.h src/core/bf16.h
src/cli/args.h:
src/core/status.h:
src/cli/commands.h:
src/cli/data_flags.h:
src/data/augment.h:
src/core/rng.h:
src/data/image.h:
src/data/sample.h:
src/io/file.h:
src/io/tensors.h:
src/core/bf16.h:
