build-m/src/train/train_tuning.o: src/train/train_tuning.c \
 src/train/train_tuning.h src/train/config.h src/core/status.h \
 src/train/trainer.h src/nn/model.h src/core/profile.h src/nn/device.h \
 src/core/bf16.h src/nn/params.h src/core/rng.h src/train/tuning.h \
 src/nn/autotune.h src/nn/dev_clock.h src/nn/precision.h src/optim/adam.h \
 src/optim/loss_scale.h src/optim/lr_scale.h
src/train/train_tuning.h:
src/train/config.h:
src/core/status.h:
src/train/trainer.h:
src/nn/model.h:
src/core/profile.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/params.h:
src/core/rng.h:
src/train/tuning.h:
src/nn/autotune.h:
src/nn/dev_clock.h:
src/nn/precision.h:
src/optim/adam.h:
src/optim/loss_scale.h:
src/optim/lr_scale.h:
