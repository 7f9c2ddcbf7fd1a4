build-m/src/cpu/dnnl_conv.o: src/cpu/dnnl_conv.c src/cpu/dnnl.h \
 src/nn/device.h src/core/bf16.h src/core/status.h
src/cpu/dnnl.h:
src/nn/device.h:
src/core/bf16.h:
src/core/status.h:
