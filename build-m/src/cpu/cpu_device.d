build-m/src/cpu/cpu_device.o: src/cpu/cpu_device.c src/cpu/dnnl.h \
 src/nn/device.h src/core/bf16.h src/core/status.h src/cpu/kernels.h
src/cpu/dnnl.h:
src/nn/device.h:
src/core/bf16.h:
src/core/status.h:
src/cpu/kernels.h:
