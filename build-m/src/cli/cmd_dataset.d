build-m/src/cli/cmd_dataset.o: src/cli/cmd_dataset.c src/cli/args.h \
 src/core/status.h src/cli/commands.h src/cli/exit.h src/data/prep.h \
 src/data/image.h src/data/sample.h src/io/file.h
src/cli/args.h:
src/core/status.h:
src/cli/commands.h:
src/cli/exit.h:
src/data/prep.h:
src/data/image.h:
src/data/sample.h:
src/io/file.h:
