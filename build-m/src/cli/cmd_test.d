build-m/src/cli/cmd_test.o: src/cli/cmd_test.c src/cli/args.h \
 src/core/status.h src/cli/commands.h src/cli/data_flags.h \
 src/cli/eval_flags.h src/cli/snapshot_path.h src/eval/results.h \
 src/eval/metrics.h src/data/sample.h src/infer/predict.h \
 src/data/augment.h src/core/rng.h src/data/image.h \
 src/data/person_root.h src/nn/device.h src/core/bf16.h src/nn/model.h \
 src/core/profile.h src/nn/params.h src/infer/tester.h src/io/file.h \
 src/train/snapshot.h src/io/tensors.h
src/cli/args.h:
src/core/status.h:
src/cli/commands.h:
src/cli/data_flags.h:
src/cli/eval_flags.h:
src/cli/snapshot_path.h:
src/eval/results.h:
src/eval/metrics.h:
src/data/sample.h:
src/infer/predict.h:
src/data/augment.h:
src/core/rng.h:
src/data/image.h:
src/data/person_root.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/model.h:
src/core/profile.h:
src/nn/params.h:
src/infer/tester.h:
src/io/file.h:
src/train/snapshot.h:
src/io/tensors.h:
