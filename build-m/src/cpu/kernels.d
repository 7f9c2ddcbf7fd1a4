build-m/src/cpu/kernels.o: src/cpu/kernels.c src/cpu/kernels.h \
 src/core/bf16.h src/nn/device.h src/core/status.h \
 src/cpu/kernels_act.inc
src/cpu/kernels.h:
src/core/bf16.h:
src/nn/device.h:
src/core/status.h:
src/cpu/kernels_act.inc:
