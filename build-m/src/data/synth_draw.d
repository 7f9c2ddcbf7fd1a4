build-m/src/data/synth_draw.o: src/data/synth_draw.c src/core/rng.h \
 src/data/synth.h src/core/status.h
src/core/rng.h:
src/data/synth.h:
src/core/status.h:
