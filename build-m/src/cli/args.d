build-m/src/cli/args.o: src/cli/args.c src/cli/args.h src/core/status.h
src/cli/args.h:
src/core/status.h:
