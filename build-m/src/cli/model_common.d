build-m/src/cli/model_common.o: src/cli/model_common.c \
 src/cli/model_common.h src/core/status.h src/dist/dist.h src/nn/model.h \
 src/core/profile.h src/nn/device.h src/core/bf16.h src/nn/params.h \
 src/core/rng.h src/train/step.h src/optim/adam.h src/optim/loss_scale.h \
 src/train/trainer.h src/train/config.h src/train/tuning.h \
 src/nn/autotune.h src/nn/dev_clock.h src/nn/precision.h \
 src/optim/lr_scale.h src/io/tensors.h
src/cli/model_common.h:
src/core/status.h:
src/dist/dist.h:
src/nn/model.h:
src/core/profile.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/params.h:
src/core/rng.h:
src/train/step.h:
src/optim/adam.h:
src/optim/loss_scale.h:
src/train/trainer.h:
src/train/config.h:
src/train/tuning.h:
src/nn/autotune.h:
src/nn/dev_clock.h:
src/nn/precision.h:
src/optim/lr_scale.h:
src/io/tensors.h:
