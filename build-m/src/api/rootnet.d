build-m/src/api/rootnet.o: src/api/rootnet.c include/rootnet.h \
 src/data/image.h src/core/status.h src/infer/predict.h \
 src/data/augment.h src/core/rng.h src/data/person_root.h src/nn/device.h \
 src/core/bf16.h src/nn/model.h src/core/profile.h src/nn/params.h \
 src/nn/precision.h src/train/snapshot.h src/io/tensors.h
include/rootnet.h:
src/data/image.h:
src/core/status.h:
src/infer/predict.h:
src/data/augment.h:
src/core/rng.h:
src/data/person_root.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/model.h:
src/core/profile.h:
src/nn/params.h:
src/nn/precision.h:
src/train/snapshot.h:
src/io/tensors.h:
