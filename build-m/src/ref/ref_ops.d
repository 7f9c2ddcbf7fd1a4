build-m/src/ref/ref_ops.o: src/ref/ref_ops.c src/ref/ref.h
src/ref/ref.h:
