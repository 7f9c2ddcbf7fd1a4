build-m/src/nn/device.o: src/nn/device.c src/nn/device.h src/core/bf16.h \
 src/core/status.h
src/nn/device.h:
src/core/bf16.h:
src/core/status.h:
