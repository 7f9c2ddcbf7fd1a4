build-m/src/cli/tuning_flags.o: src/cli/tuning_flags.c \
 src/cli/tuning_flags.h src/cli/args.h src/core/status.h \
 src/train/tuning.h src/core/profile.h src/nn/autotune.h src/nn/device.h \
 src/core/bf16.h src/nn/dev_clock.h src/nn/model.h src/nn/params.h \
 src/core/rng.h src/nn/precision.h src/optim/adam.h \
 src/optim/loss_scale.h src/optim/lr_scale.h
src/cli/tuning_flags.h:
src/cli/args.h:
src/core/status.h:
src/train/tuning.h:
src/core/profile.h:
src/nn/autotune.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/dev_clock.h:
src/nn/model.h:
src/nn/params.h:
src/core/rng.h:
src/nn/precision.h:
src/optim/adam.h:
src/optim/loss_scale.h:
src/optim/lr_scale.h:
