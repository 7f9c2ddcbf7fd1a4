build-m/src/io/pickle_write.o: src/io/pickle_write.c \
 src/io/pickle_write.h src/core/status.h
src/io/pickle_write.h:
src/core/status.h:
