build-m/src/ref/ref_conv.o: src/ref/ref_conv.c src/ref/ref.h
src/ref/ref.h:
