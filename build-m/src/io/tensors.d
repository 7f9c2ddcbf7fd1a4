build-m/src/io/tensors.o: src/io/tensors.c src/io/tensors.h \
 src/core/bf16.h src/core/status.h src/io/file.h
src/io/tensors.h:
src/core/bf16.h:
src/core/status.h:
src/io/file.h:
