build-m/src/train/snapshot.o: src/train/snapshot.c src/train/snapshot.h \
 src/core/rng.h src/core/status.h src/io/tensors.h src/core/bf16.h \
 src/nn/params.h src/nn/weights.h src/train/config.h
src/train/snapshot.h:
src/core/rng.h:
src/core/status.h:
src/io/tensors.h:
src/core/bf16.h:
src/nn/params.h:
src/nn/weights.h:
src/train/config.h:
