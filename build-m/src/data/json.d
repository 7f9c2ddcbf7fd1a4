build-m/src/data/json.o: src/data/json.c src/data/json.h \
 src/core/status.h
src/data/json.h:
src/core/status.h:
