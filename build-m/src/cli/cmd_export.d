build-m/src/cli/cmd_export.o: src/cli/cmd_export.c src/cli/args.h \
 src/core/status.h src/cli/commands.h src/export/export.h \
 src/io/tensors.h src/core/bf16.h src/nn/params.h src/core/rng.h \
 src/optim/adam.h src/nn/device.h src/nn/weights.h src/train/snapshot.h
src/cli/args.h:
src/core/status.h:
src/cli/commands.h:
src/export/export.h:
src/io/tensors.h:
src/core/bf16.h:
src/nn/params.h:
src/core/rng.h:
src/optim/adam.h:
src/nn/device.h:
src/nn/weights.h:
src/train/snapshot.h:
