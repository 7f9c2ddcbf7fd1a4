build-m/src/nn/precision.o: src/nn/precision.c src/nn/precision.h \
 src/core/status.h src/nn/model.h src/core/profile.h src/nn/device.h \
 src/core/bf16.h src/nn/params.h src/core/rng.h
src/nn/precision.h:
src/core/status.h:
src/nn/model.h:
src/core/profile.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/params.h:
src/core/rng.h:
