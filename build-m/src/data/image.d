build-m/src/data/image.o: src/data/image.c src/data/image.h \
 src/core/status.h
src/data/image.h:
src/core/status.h:
