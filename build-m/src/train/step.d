build-m/src/train/step.o: src/train/step.c src/train/step.h \
 src/dist/dist.h src/core/status.h src/nn/model.h src/core/profile.h \
 src/nn/device.h src/core/bf16.h src/nn/params.h src/core/rng.h \
 src/optim/adam.h src/optim/loss_scale.h src/train/trainer.h \
 src/train/config.h
src/train/step.h:
src/dist/dist.h:
src/core/status.h:
src/nn/model.h:
src/core/profile.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/params.h:
src/core/rng.h:
src/optim/adam.h:
src/optim/loss_scale.h:
src/train/trainer.h:
src/train/config.h:
