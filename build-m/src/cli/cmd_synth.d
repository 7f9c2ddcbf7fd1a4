build-m/src/cli/cmd_synth.o: src/cli/cmd_synth.c src/cli/args.h \
 src/core/status.h src/cli/commands.h src/data/synth.h
src/cli/args.h:
src/core/status.h:
src/cli/commands.h:
src/data/synth.h:
