build-m/src/cli/cmd_bench.o: src/cli/cmd_bench.c src/cli/args.h \
 src/core/status.h src/cli/commands.h src/cli/dist_cli.h src/dist/dist.h \
 src/nn/model.h src/core/profile.h src/nn/device.h src/core/bf16.h \
 src/nn/params.h src/core/rng.h src/cli/model_common.h src/train/step.h \
 src/optim/adam.h src/optim/loss_scale.h src/train/trainer.h \
 src/train/config.h src/train/tuning.h src/nn/autotune.h \
 src/nn/dev_clock.h src/nn/precision.h src/optim/lr_scale.h \
 src/cli/tuning_flags.h
src/cli/args.h:
src/core/status.h:
src/cli/commands.h:
src/cli/dist_cli.h:
src/dist/dist.h:
src/nn/model.h:
src/core/profile.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/params.h:
src/core/rng.h:
src/cli/model_common.h:
src/train/step.h:
src/optim/adam.h:
src/optim/loss_scale.h:
src/train/trainer.h:
src/train/config.h:
src/train/tuning.h:
src/nn/autotune.h:
src/nn/dev_clock.h:
src/nn/precision.h:
src/optim/lr_scale.h:
src/cli/tuning_flags.h:
