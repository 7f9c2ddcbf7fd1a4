build-m/src/io/load.o: src/io/load.c src/io/file.h src/core/status.h \
 src/io/tensors.h src/core/bf16.h
src/io/file.h:
src/core/status.h:
src/io/tensors.h:
src/core/bf16.h:
