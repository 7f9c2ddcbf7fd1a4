build-m/src/viz/labels.o: src/viz/labels.c src/viz/labels.h \
 src/core/status.h
src/viz/labels.h:
src/core/status.h:
