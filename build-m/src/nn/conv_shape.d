build-m/src/nn/conv_shape.o: src/nn/conv_shape.c src/nn/device.h \
 src/core/bf16.h src/core/status.h
src/nn/device.h:
src/core/bf16.h:
src/core/status.h:
