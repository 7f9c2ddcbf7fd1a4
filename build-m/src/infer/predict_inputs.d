build-m/src/infer/predict_inputs.o: src/infer/predict_inputs.c \
 src/infer/predict_inputs.h src/data/json.h src/core/status.h \
 src/data/jsonf.h src/data/sample.h src/infer/predict_opts.h \
 src/nn/device.h src/core/bf16.h src/data/bbox.h src/data/exif_focal.h \
 src/data/image.h src/infer/predict.h src/data/augment.h src/core/rng.h \
 src/data/person_root.h src/nn/model.h src/core/profile.h src/nn/params.h
src/infer/predict_inputs.h:
src/data/json.h:
src/core/status.h:
src/data/jsonf.h:
src/data/sample.h:
src/infer/predict_opts.h:
src/nn/device.h:
src/core/bf16.h:
src/data/bbox.h:
src/data/exif_focal.h:
src/data/image.h:
src/infer/predict.h:
src/data/augment.h:
src/core/rng.h:
src/data/person_root.h:
src/nn/model.h:
src/core/profile.h:
src/nn/params.h:
