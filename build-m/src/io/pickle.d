build-m/src/io/pickle.o: src/io/pickle.c src/io/pickle.h \
 src/core/status.h src/io/tensors.h src/core/bf16.h
src/io/pickle.h:
src/core/status.h:
src/io/tensors.h:
src/core/bf16.h:
