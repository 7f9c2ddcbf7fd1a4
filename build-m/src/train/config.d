build-m/src/train/config.o: src/train/config.c src/train/config.h \
 src/core/status.h src/nn/precision.h src/nn/model.h src/core/profile.h \
 src/nn/device.h src/core/bf16.h src/nn/params.h src/core/rng.h \
 src/optim/loss_scale.h src/optim/adam.h src/optim/lr_scale.h
src/train/config.h:
src/core/status.h:
src/nn/precision.h:
src/nn/model.h:
src/core/profile.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/params.h:
src/core/rng.h:
src/optim/loss_scale.h:
src/optim/adam.h:
src/optim/lr_scale.h:
