build-m/src/data/synth_scene.o: src/data/synth_scene.c src/core/rng.h \
 src/data/synth.h src/core/status.h
src/core/rng.h:
src/data/synth.h:
src/core/status.h:
