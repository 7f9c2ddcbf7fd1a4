build-m/src/export/authors_pth.o: src/export/authors_pth.c \
 src/export/export.h src/core/status.h src/io/tensors.h src/core/bf16.h \
 src/nn/params.h src/core/rng.h src/optim/adam.h src/nn/device.h \
 src/io/pth_write.h src/io/pickle_write.h
src/export/export.h:
src/core/status.h:
src/io/tensors.h:
src/core/bf16.h:
src/nn/params.h:
src/core/rng.h:
src/optim/adam.h:
src/nn/device.h:
src/io/pth_write.h:
src/io/pickle_write.h:
