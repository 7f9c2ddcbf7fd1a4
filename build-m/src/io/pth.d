build-m/src/io/pth.o: src/io/pth.c src/io/file.h src/core/status.h \
 src/io/pickle.h src/io/tensors.h src/core/bf16.h src/io/zip.h
src/io/file.h:
src/core/status.h:
src/io/pickle.h:
src/io/tensors.h:
src/core/bf16.h:
src/io/zip.h:
