build-m/src/data/synth.o: src/data/synth.c src/core/rng.h \
 src/data/synth.h src/core/status.h src/io/file.h
src/core/rng.h:
src/data/synth.h:
src/core/status.h:
src/io/file.h:
