build-m/src/eval/results.o: src/eval/results.c src/eval/results.h \
 src/core/status.h src/eval/metrics.h src/data/sample.h
src/eval/results.h:
src/core/status.h:
src/eval/metrics.h:
src/data/sample.h:
