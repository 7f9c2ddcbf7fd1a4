build-m/src/nn/model.o: src/nn/model.c src/nn/model.h src/core/profile.h \
 src/core/status.h src/nn/device.h src/core/bf16.h src/nn/params.h \
 src/core/rng.h src/nn/autotune.h
src/nn/model.h:
src/core/profile.h:
src/core/status.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/params.h:
src/core/rng.h:
src/nn/autotune.h:
