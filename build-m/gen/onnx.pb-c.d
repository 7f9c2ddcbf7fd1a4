build-m/gen/onnx.pb-c.o: build-m/gen/onnx.pb-c.c build-m/gen/onnx.pb-c.h
build-m/gen/onnx.pb-c.h:
