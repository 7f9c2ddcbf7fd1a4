build-m/src/core/profile.o: src/core/profile.c src/core/profile.h \
 src/core/status.h src/io/file.h
src/core/profile.h:
src/core/status.h:
src/io/file.h:
