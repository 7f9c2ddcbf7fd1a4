build-m/src/io/npy.o: src/io/npy.c src/io/file.h src/core/status.h \
 src/io/tensors.h src/core/bf16.h
src/io/file.h:
src/core/status.h:
src/io/tensors.h:
src/core/bf16.h:
