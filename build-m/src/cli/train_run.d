build-m/src/cli/train_run.o: src/cli/train_run.c src/cli/train_run.h \
 src/train/train_dist.h src/dist/dist.h src/core/status.h src/nn/model.h \
 src/core/profile.h src/nn/device.h src/core/bf16.h src/nn/params.h \
 src/core/rng.h src/train/config.h src/train/step.h src/optim/adam.h \
 src/optim/loss_scale.h src/train/trainer.h src/train/epoch_eval.h \
 src/infer/tester.h src/data/sample.h src/eval/metrics.h \
 src/train/hook_chain.h src/train/train_tuning.h src/train/tuning.h \
 src/nn/autotune.h src/nn/dev_clock.h src/nn/precision.h \
 src/optim/lr_scale.h
src/cli/train_run.h:
src/train/train_dist.h:
src/dist/dist.h:
src/core/status.h:
src/nn/model.h:
src/core/profile.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/params.h:
src/core/rng.h:
src/train/config.h:
src/train/step.h:
src/optim/adam.h:
src/optim/loss_scale.h:
src/train/trainer.h:
src/train/epoch_eval.h:
src/infer/tester.h:
src/data/sample.h:
src/eval/metrics.h:
src/train/hook_chain.h:
src/train/train_tuning.h:
src/train/tuning.h:
src/nn/autotune.h:
src/nn/dev_clock.h:
src/nn/precision.h:
src/optim/lr_scale.h:
