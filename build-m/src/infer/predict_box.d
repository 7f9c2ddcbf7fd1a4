build-m/src/infer/predict_box.o: src/infer/predict_box.c src/data/bbox.h \
 src/infer/predict.h src/core/status.h src/data/augment.h src/core/rng.h \
 src/data/image.h src/data/person_root.h src/nn/device.h src/core/bf16.h \
 src/nn/model.h src/core/profile.h src/nn/params.h
src/data/bbox.h:
src/infer/predict.h:
src/core/status.h:
src/data/augment.h:
src/core/rng.h:
src/data/image.h:
src/data/person_root.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/model.h:
src/core/profile.h:
src/nn/params.h:
