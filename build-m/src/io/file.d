build-m/src/io/file.o: src/io/file.c src/io/file.h src/core/status.h
src/io/file.h:
src/core/status.h:
