build-m/src/dist/dist.o: src/dist/dist.c src/dist/dist.h \
 src/core/status.h src/nn/model.h src/core/profile.h src/nn/device.h \
 src/core/bf16.h src/nn/params.h src/core/rng.h
src/dist/dist.h:
src/core/status.h:
src/nn/model.h:
src/core/profile.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/params.h:
src/core/rng.h:
