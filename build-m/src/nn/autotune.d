build-m/src/nn/autotune.o: src/nn/autotune.c src/nn/autotune.h \
 src/core/status.h src/nn/device.h src/core/bf16.h src/core/profile.h \
 src/io/file.h
src/nn/autotune.h:
src/core/status.h:
src/nn/device.h:
src/core/bf16.h:
src/core/profile.h:
src/io/file.h:
