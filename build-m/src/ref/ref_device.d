build-m/src/ref/ref_device.o: src/ref/ref_device.c src/nn/device.h \
 src/core/bf16.h src/core/status.h src/ref/ref.h
src/nn/device.h:
src/core/bf16.h:
src/core/status.h:
src/ref/ref.h:
