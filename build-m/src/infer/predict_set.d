build-m/src/infer/predict_set.o: src/infer/predict_set.c \
 src/infer/predict_set.h src/core/status.h src/infer/predict_opts.h \
 src/nn/device.h src/core/bf16.h src/nn/params.h src/core/rng.h \
 src/data/loader.h src/data/augment.h src/data/image.h src/data/sample.h \
 src/eval/metrics.h src/eval/results.h src/infer/predict.h \
 src/data/person_root.h src/nn/model.h src/core/profile.h \
 src/infer/predict_inputs.h src/data/json.h src/data/jsonf.h \
 src/infer/tester.h src/io/file.h
src/infer/predict_set.h:
src/core/status.h:
src/infer/predict_opts.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/params.h:
src/core/rng.h:
src/data/loader.h:
src/data/augment.h:
src/data/image.h:
src/data/sample.h:
src/eval/metrics.h:
src/eval/results.h:
src/infer/predict.h:
src/data/person_root.h:
src/nn/model.h:
src/core/profile.h:
src/infer/predict_inputs.h:
src/data/json.h:
src/data/jsonf.h:
src/infer/tester.h:
src/io/file.h:
