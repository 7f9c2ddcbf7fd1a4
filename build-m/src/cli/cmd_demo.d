build-m/src/cli/cmd_demo.o: src/cli/cmd_demo.c src/cli/args.h \
 src/core/status.h src/cli/commands.h src/cli/eval_flags.h \
 src/data/draw.h src/data/image.h src/infer/predict.h src/data/augment.h \
 src/core/rng.h src/data/person_root.h src/nn/device.h src/core/bf16.h \
 src/nn/model.h src/core/profile.h src/nn/params.h src/io/file.h \
 src/train/snapshot.h src/io/tensors.h src/viz/people.h
src/cli/args.h:
src/core/status.h:
src/cli/commands.h:
src/cli/eval_flags.h:
src/data/draw.h:
src/data/image.h:
src/infer/predict.h:
src/data/augment.h:
src/core/rng.h:
src/data/person_root.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/model.h:
src/core/profile.h:
src/nn/params.h:
src/io/file.h:
src/train/snapshot.h:
src/io/tensors.h:
src/viz/people.h:
