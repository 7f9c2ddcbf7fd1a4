build-m/src/cli/exit.o: src/cli/exit.c src/cli/exit.h src/core/status.h
src/cli/exit.h:
src/core/status.h:
