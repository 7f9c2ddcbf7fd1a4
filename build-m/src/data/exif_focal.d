build-m/src/data/exif_focal.o: src/data/exif_focal.c \
 src/data/exif_focal.h src/core/status.h
src/data/exif_focal.h:
src/core/status.h:
