build-m/src/io/zip.o: src/io/zip.c src/io/zip.h src/core/status.h
src/io/zip.h:
src/core/status.h:
