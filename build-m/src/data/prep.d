build-m/src/data/prep.o: src/data/prep.c src/data/prep.h \
 src/core/status.h src/data/image.h src/data/cache.h src/data/sample.h
src/data/prep.h:
src/core/status.h:
src/data/image.h:
src/data/cache.h:
src/data/sample.h:
