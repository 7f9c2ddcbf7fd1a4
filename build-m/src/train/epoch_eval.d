build-m/src/train/epoch_eval.o: src/train/epoch_eval.c \
 src/train/epoch_eval.h src/infer/tester.h src/core/status.h \
 src/data/sample.h src/eval/metrics.h src/nn/device.h src/core/bf16.h \
 src/nn/params.h src/core/rng.h src/train/config.h src/train/trainer.h \
 src/nn/model.h src/core/profile.h src/data/json.h src/io/file.h
src/train/epoch_eval.h:
src/infer/tester.h:
src/core/status.h:
src/data/sample.h:
src/eval/metrics.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/params.h:
src/core/rng.h:
src/train/config.h:
src/train/trainer.h:
src/nn/model.h:
src/core/profile.h:
src/data/json.h:
src/io/file.h:
