build-m/src/data/augment.o: src/data/augment.c src/data/augment.h \
 src/core/rng.h src/core/status.h src/data/image.h
src/data/augment.h:
src/core/rng.h:
src/core/status.h:
src/data/image.h:
