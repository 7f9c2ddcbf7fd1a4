build-m/src/ref/ref_guard.o: src/ref/ref_guard.c src/nn/device.h \
 src/core/bf16.h src/core/status.h
src/nn/device.h:
src/core/bf16.h:
src/core/status.h:
