build-m/src/cli/cmd_dataset.o: src/cli/cmd_dataset.c src/cli/args.h \
 src/core/status.h src/cli/commands.h src/data/sample.h
src/cli/args.h:
src/core/status.h:
src/cli/commands.h:
src/data/sample.h:
