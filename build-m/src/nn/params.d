build-m/src/nn/params.o: src/nn/params.c src/nn/params.h src/core/rng.h \
 src/core/status.h src/nn/device.h src/core/bf16.h
src/nn/params.h:
src/core/rng.h:
src/core/status.h:
src/nn/device.h:
src/core/bf16.h:
