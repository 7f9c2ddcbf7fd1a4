build-m/src/nn/weights.o: src/nn/weights.c src/nn/weights.h \
 src/core/rng.h src/core/status.h src/io/tensors.h src/core/bf16.h \
 src/nn/params.h
src/nn/weights.h:
src/core/rng.h:
src/core/status.h:
src/io/tensors.h:
src/core/bf16.h:
src/nn/params.h:
