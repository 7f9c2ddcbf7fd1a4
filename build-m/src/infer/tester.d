build-m/src/infer/tester.o: src/infer/tester.c src/infer/tester.h \
 src/core/status.h src/data/sample.h src/eval/metrics.h src/nn/device.h \
 src/core/bf16.h src/nn/params.h src/core/rng.h src/data/loader.h \
 src/data/augment.h src/data/image.h src/eval/results.h \
 src/infer/predict.h src/data/person_root.h src/nn/model.h \
 src/core/profile.h src/io/file.h
src/infer/tester.h:
src/core/status.h:
src/data/sample.h:
src/eval/metrics.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/params.h:
src/core/rng.h:
src/data/loader.h:
src/data/augment.h:
src/data/image.h:
src/eval/results.h:
src/infer/predict.h:
src/data/person_root.h:
src/nn/model.h:
src/core/profile.h:
src/io/file.h:
