build-m/src/cli/cmd_evaluate.o: src/cli/cmd_evaluate.c src/cli/args.h \
 src/core/status.h src/cli/commands.h src/eval/metrics.h \
 src/data/sample.h src/eval/results.h
src/cli/args.h:
src/core/status.h:
src/cli/commands.h:
src/eval/metrics.h:
src/data/sample.h:
src/eval/results.h:
