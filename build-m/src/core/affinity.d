build-m/src/core/affinity.o: src/core/affinity.c src/core/affinity.h \
 src/core/status.h
src/core/affinity.h:
src/core/status.h:
