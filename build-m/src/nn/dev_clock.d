build-m/src/nn/dev_clock.o: src/nn/dev_clock.c src/nn/dev_clock.h \
 src/core/profile.h src/core/status.h src/nn/device.h src/core/bf16.h
src/nn/dev_clock.h:
src/core/profile.h:
src/core/status.h:
src/nn/device.h:
src/core/bf16.h:
