build-m/src/cli/snapshot_path.o: src/cli/snapshot_path.c \
 src/cli/snapshot_path.h src/core/status.h
src/cli/snapshot_path.h:
src/core/status.h:
