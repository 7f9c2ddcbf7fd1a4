build-m/src/cli/cmd_train.o: src/cli/cmd_train.c src/cli/args.h \
 src/core/status.h src/cli/commands.h src/cli/dist_cli.h src/dist/dist.h \
 src/nn/model.h src/core/profile.h src/nn/device.h src/core/bf16.h \
 src/nn/params.h src/core/rng.h src/cli/train_run.h \
 src/train/train_dist.h src/train/config.h src/train/step.h \
 src/optim/adam.h src/optim/loss_scale.h src/train/trainer.h
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
src/cli/train_run.h:
src/train/train_dist.h:
src/train/config.h:
src/train/step.h:
src/optim/adam.h:
src/optim/loss_scale.h:
src/train/trainer.h:
