build-m/src/core/status.o: src/core/status.c src/core/status.h
src/core/status.h:
