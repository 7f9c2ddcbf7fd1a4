build-m/src/data/draw.o: src/data/draw.c src/data/draw.h \
 src/core/status.h src/io/file.h
src/data/draw.h:
src/core/status.h:
src/io/file.h:
