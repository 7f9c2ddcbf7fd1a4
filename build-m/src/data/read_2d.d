build-m/src/data/read_2d.o: src/data/read_2d.c src/data/jsonf.h \
 src/data/json.h src/core/status.h src/data/readers.h src/data/sample.h
src/data/jsonf.h:
src/data/json.h:
src/core/status.h:
src/data/readers.h:
src/data/sample.h:
