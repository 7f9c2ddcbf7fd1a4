build-m/src/data/bbox.o: src/data/bbox.c src/data/bbox.h
src/data/bbox.h:
