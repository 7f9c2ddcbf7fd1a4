build-m/src/optim/lr_scale.o: src/optim/lr_scale.c src/optim/lr_scale.h \
 src/core/status.h
src/optim/lr_scale.h:
src/core/status.h:
