build-m/src/train/tuning.o: src/train/tuning.c src/train/tuning.h \
 src/core/profile.h src/core/status.h src/nn/autotune.h src/nn/device.h \
 src/core/bf16.h src/nn/dev_clock.h src/nn/model.h src/nn/params.h \
 src/core/rng.h src/nn/precision.h src/optim/adam.h \
 src/optim/loss_scale.h src/optim/lr_scale.h src/core/affinity.h
src/train/tuning.h:
src/core/profile.h:
src/core/status.h:
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
src/core/affinity.h:
