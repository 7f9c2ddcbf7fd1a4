build-m/src/data/jsonf.o: src/data/jsonf.c src/data/jsonf.h \
 src/data/json.h src/core/status.h
src/data/jsonf.h:
src/data/json.h:
src/core/status.h:
