build-m/src/train/trainer.o: src/train/trainer.c src/train/trainer.h \
 src/core/status.h src/nn/model.h src/core/profile.h src/nn/device.h \
 src/core/bf16.h src/nn/params.h src/core/rng.h src/train/config.h \
 src/data/loader.h src/data/augment.h src/data/image.h src/data/sample.h \
 src/io/file.h src/nn/weights.h src/io/tensors.h src/optim/adam.h \
 src/train/step.h src/dist/dist.h src/optim/loss_scale.h src/train/plot.h \
 src/train/snapshot.h
src/train/trainer.h:
src/core/status.h:
src/nn/model.h:
src/core/profile.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/params.h:
src/core/rng.h:
src/train/config.h:
src/data/loader.h:
src/data/augment.h:
src/data/image.h:
src/data/sample.h:
src/io/file.h:
src/nn/weights.h:
src/io/tensors.h:
src/optim/adam.h:
src/train/step.h:
src/dist/dist.h:
src/optim/loss_scale.h:
src/train/plot.h:
src/train/snapshot.h:
