build-m/src/dist/dist_mpi.o: src/dist/dist_mpi.c \
 /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h \
 /usr/lib/x86_64-linux-gnu/openmpi/include/mpi_portable_platform.h \
 src/dist/dist.h src/core/status.h src/nn/model.h src/core/profile.h \
 src/nn/device.h src/core/bf16.h src/nn/params.h src/core/rng.h
/usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h:
/usr/lib/x86_64-linux-gnu/openmpi/include/mpi_portable_platform.h:
src/dist/dist.h:
src/core/status.h:
src/nn/model.h:
src/core/profile.h:
src/nn/device.h:
src/core/bf16.h:
src/nn/params.h:
src/core/rng.h:
