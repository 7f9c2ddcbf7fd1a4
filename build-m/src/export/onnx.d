build-m/src/export/onnx.o: src/export/onnx.c src/export/export.h \
 src/core/status.h src/io/tensors.h src/core/bf16.h src/nn/params.h \
 src/core/rng.h src/optim/adam.h src/nn/device.h src/io/file.h \
 build-m/gen/onnx.pb-c.h
src/export/export.h:
src/core/status.h:
src/io/tensors.h:
src/core/bf16.h:
src/nn/params.h:
src/core/rng.h:
src/optim/adam.h:
src/nn/device.h:
src/io/file.h:
build-m/gen/onnx.pb-c.h:
