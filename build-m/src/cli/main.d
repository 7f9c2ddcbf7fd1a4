build-m/src/cli/main.o: src/cli/main.c src/cli/commands.h src/cli/exit.h \
 src/core/status.h
src/cli/commands.h:
src/cli/exit.h:
src/core/status.h:
