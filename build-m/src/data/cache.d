build-m/src/data/cache.o: src/data/cache.c src/data/cache.h \
 src/core/status.h src/data/sample.h
src/data/cache.h:
src/core/status.h:
src/data/sample.h:
