build-m/src/optim/adam.o: src/optim/adam.c src/optim/adam.h \
 src/nn/device.h src/core/bf16.h src/core/status.h
src/optim/adam.h:
src/nn/device.h:
src/core/bf16.h:
src/core/status.h:
