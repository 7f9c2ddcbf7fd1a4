build-m/src/export/state.o: src/export/state.c src/export/export.h \
 src/core/status.h src/io/tensors.h src/core/bf16.h src/nn/params.h \
 src/core/rng.h src/optim/adam.h src/nn/device.h
src/export/export.h:
src/core/status.h:
src/io/tensors.h:
src/core/bf16.h:
src/nn/params.h:
src/core/rng.h:
src/optim/adam.h:
src/nn/device.h:
