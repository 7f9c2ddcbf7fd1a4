build-m/src/viz/canvas.o: src/viz/canvas.c src/viz/canvas.h \
 src/core/status.h src/data/draw.h
src/viz/canvas.h:
src/core/status.h:
src/data/draw.h:
