build-m/src/data/read_common.o: src/data/read_common.c src/data/bbox.h \
 src/data/jsonf.h src/data/json.h src/core/status.h src/data/readers.h \
 src/data/sample.h
src/data/bbox.h:
src/data/jsonf.h:
src/data/json.h:
src/core/status.h:
src/data/readers.h:
src/data/sample.h:
