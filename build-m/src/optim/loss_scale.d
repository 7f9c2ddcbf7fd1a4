build-m/src/optim/loss_scale.o: src/optim/loss_scale.c \
 src/optim/loss_scale.h src/core/status.h src/optim/adam.h \
 src/nn/device.h src/core/bf16.h
src/optim/loss_scale.h:
src/core/status.h:
src/optim/adam.h:
src/nn/device.h:
src/core/bf16.h:
