build-m/src/cli/dist_cli.o: src/cli/dist_cli.c src/cli/dist_cli.h \
 src/cli/args.h src/core/status.h src/dist/dist.h src/nn/model.h \
 src/core/profile.h src/nn/device.h src/core/bf16.h src/nn/params.h \
 src/core/rng.h
src/cli/dist_cli.h:
src/cli/args.h:
src/core/status.h:
src/dist/dist.h:
src/nn/model.h:
src/core/profile.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/params.h:
src/core/rng.h:
