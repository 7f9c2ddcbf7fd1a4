build-m/src/io/pth_write.o: src/io/pth_write.c src/io/pth_write.h \
 src/core/status.h src/io/pickle_write.h src/io/tensors.h src/core/bf16.h \
 src/io/zip_write.h src/io/file.h
src/io/pth_write.h:
src/core/status.h:
src/io/pickle_write.h:
src/io/tensors.h:
src/core/bf16.h:
src/io/zip_write.h:
src/io/file.h:
