build-m/src/data/image.o: src/data/image.c src/data/image.h \
 src/core/status.h src/data/exif_focal.h src/io/file.h src/core/profile.h
src/data/image.h:
src/core/status.h:
src/data/exif_focal.h:
src/io/file.h:
src/core/profile.h:
