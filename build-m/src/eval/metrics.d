build-m/src/eval/metrics.o: src/eval/metrics.c src/eval/metrics.h \
 src/core/status.h src/data/sample.h
src/eval/metrics.h:
src/core/status.h:
src/data/sample.h:
