build-m/src/cli/eval_flags.o: src/cli/eval_flags.c src/cli/eval_flags.h \
 src/cli/args.h src/core/status.h src/nn/device.h src/core/bf16.h \
 src/infer/predict.h src/data/augment.h src/core/rng.h src/data/image.h \
 src/data/person_root.h src/nn/model.h src/core/profile.h src/nn/params.h \
 src/nn/precision.h
src/cli/eval_flags.h:
src/cli/args.h:
src/core/status.h:
src/nn/device.h:
src/core/bf16.h:
src/infer/predict.h:
src/data/augment.h:
src/core/rng.h:
src/data/image.h:
src/data/person_root.h:
src/nn/model.h:
src/core/profile.h:
src/nn/params.h:
src/nn/precision.h:
