build-m/src/data/loader.o: src/data/loader.c src/data/loader.h \
 src/core/status.h src/data/augment.h src/core/rng.h src/data/image.h \
 src/data/sample.h
src/data/loader.h:
src/core/status.h:
src/data/augment.h:
src/core/rng.h:
src/data/image.h:
src/data/sample.h:
