build-m/src/train/hook_chain.o: src/train/hook_chain.c \
 src/train/hook_chain.h src/train/trainer.h src/core/status.h \
 src/nn/model.h src/core/profile.h src/nn/device.h src/core/bf16.h \
 src/nn/params.h src/core/rng.h src/train/config.h
src/train/hook_chain.h:
src/train/trainer.h:
src/core/status.h:
src/nn/model.h:
src/core/profile.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/params.h:
src/core/rng.h:
src/train/config.h:
