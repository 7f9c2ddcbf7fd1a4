build-m/src/train/plot.o: src/train/plot.c src/train/plot.h \
 src/core/status.h src/viz/canvas.h
src/train/plot.h:
src/core/status.h:
src/viz/canvas.h:
