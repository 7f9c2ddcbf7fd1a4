build-m/src/io/zip_write.o: src/io/zip_write.c src/io/zip_write.h \
 src/core/status.h src/io/file.h
src/io/zip_write.h:
src/core/status.h:
src/io/file.h:
