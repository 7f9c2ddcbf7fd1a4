build-m/src/data/dataset.o: src/data/dataset.c src/data/cache.h \
 src/core/status.h src/data/sample.h src/data/readers.h src/data/jsonf.h \
 src/data/json.h src/io/file.h
src/data/cache.h:
src/core/status.h:
src/data/sample.h:
src/data/readers.h:
src/data/jsonf.h:
src/data/json.h:
src/io/file.h:
