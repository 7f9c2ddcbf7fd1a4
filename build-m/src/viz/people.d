build-m/src/viz/people.o: src/viz/people.c src/viz/people.h \
 src/core/status.h src/data/draw.h src/data/person_root.h \
 src/viz/canvas.h src/viz/labels.h
src/viz/people.h:
src/core/status.h:
src/data/draw.h:
src/data/person_root.h:
src/viz/canvas.h:
src/viz/labels.h:
