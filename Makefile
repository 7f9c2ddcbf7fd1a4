# rootnet build. Targets: all (default), test, bench, asan, fuzz, clean.
CC      ?= gcc
OPT     ?= -O3 -march=native -mprefer-vector-width=512
CFLAGS  += -std=c11 -D_GNU_SOURCE $(OPT) -g -Wall -Wextra -Werror -fopenmp -Isrc -MMD -MP
LDLIBS  += -ljpeg -lpng -ljansson -lexif -lpthread -lm
LDFLAGS += -fopenmp
BUILD   ?= build

# Optional parts, detected and skipped cleanly when absent.
# MPI (src/dist, mpirun, --sync-bn): on when mpicc is found; `make MPI=0 BUILD=build-nompi` builds without it.
MPI   ?= 1
MPICC := $(if $(filter 1,$(MPI)),$(shell command -v mpicc 2>/dev/null))
ifneq ($(MPICC),)
CFLAGS += -DRN_HAVE_MPI $(shell $(MPICC) --showme:compile 2>/dev/null || $(MPICC) -compile-info | cut -d' ' -f2-)
LDLIBS += $(shell $(MPICC) --showme:link 2>/dev/null || $(MPICC) -link-info | cut -d' ' -f2-)
endif

# Version string of `rootnet --version`: git describe where this is a git checkout, else the fixed one.
RN_VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo 0.1.0)

# Devices (src/nn/device.h), each in its own folder, built when its toolchain is there:
# src/cpu (oneDNN) with DNNL=1 (the default; `make DNNL=0 BUILD=build-nodnnl` leaves it out),
# src/ref (plain C) whenever the folder exists. Tests that include a device's private
# header (naming "cpu/..." or RN_TEST_CPU_ONLY) are built only with that device.
DNNL ?= 1
DEV_SRC  := $(wildcard src/ref/*.c)
ifneq ($(DEV_SRC),)
CFLAGS += -DRN_HAVE_REF
endif
ifeq ($(DNNL),1)
DEV_SRC += $(wildcard src/cpu/*.c)
CFLAGS += -DRN_HAVE_CPU
LDLIBS := -ldnnl $(LDLIBS)
CPU_TESTS :=
else
CPU_TESTS := $(shell grep -l '"cpu/\|RN_TEST_CPU_ONLY' tests/test_*.c)
endif

LIB_SRC  := $(filter-out src/cli/% src/cpu/% src/ref/%,$(wildcard src/*/*.c)) $(DEV_SRC)
CLI_SRC  := $(wildcard src/cli/*.c)
TEST_SRC := $(filter-out $(CPU_TESTS),$(wildcard tests/test_*.c))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
DEVICES  := $(strip $(if $(filter 1,$(DNNL)),cpu) $(if $(wildcard src/ref/*.c),ref))

# Files that carry camera values, k or targets (readers, box rule, crop, loader,
# metrics, test/predict/demo paths): an implicit float conversion (float to an
# integer, double to float) is an error there; explicit casts are scanned by
# tests/nocast.py.
CAMERA_SRC := $(wildcard src/data/*.c src/eval/*.c) src/train/predict.c src/train/predict_inputs.c src/train/predict_set.c \
              src/train/tester.c src/train/trainer.c \
              src/cli/cmd_demo.c src/cli/cmd_predict.c src/cli/cmd_test.c src/cli/cmd_dataset.c src/cli/cmd_inspect.c
$(CAMERA_SRC:%.c=$(BUILD)/%.o): CFLAGS += -Wfloat-conversion

.PHONY: all test bench asan fuzz fuzz-build clean FORCE
all: $(BUILD)/rootnet $(TEST_BIN) $(BUILD)/devices

# The devices built in, one line ("cpu ref"): tests/run.sh skips the tests that need a missing one.
$(BUILD)/devices: FORCE
	@mkdir -p $(dir $@)
	@echo '$(DEVICES)' | cmp -s - $@ || echo '$(DEVICES)' > $@

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# main.o is rebuilt when the version changes (version.txt is rewritten only then).
$(BUILD)/src/cli/main.o: CFLAGS += -DRN_VERSION='"$(RN_VERSION)"'
$(BUILD)/src/cli/main.o: $(BUILD)/version.txt
$(BUILD)/version.txt: FORCE
	@mkdir -p $(dir $@) && echo '$(RN_VERSION)' | cmp -s - $@ || echo '$(RN_VERSION)' > $@

$(BUILD)/librootnet.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/rootnet: $(CLI_OBJ) $(BUILD)/librootnet.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/librootnet.a $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(BUILD)/librootnet.a
	$(CC) $(LDFLAGS) -o $@ $< $(BUILD)/librootnet.a $(LDLIBS)

test: all
	BUILD=$(BUILD) bash tests/run.sh

bench: all $(BUILD)/bench_convs $(BUILD)/bench_annot $(BUILD)/bench/bench_data
	BUILD=$(BUILD) bash bench/run.sh

# Per-layer conv benchmark (bench/bench_convs.c); run build/bench_convs --help.
$(BUILD)/bench_convs: $(BUILD)/bench/bench_convs.o $(BUILD)/src/cli/args.o $(BUILD)/librootnet.a
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/bench/bench_convs.o $(BUILD)/src/cli/args.o $(BUILD)/librootnet.a $(LDLIBS)

# Annotation-load benchmark (bench/bench_annot.c + bench/annot_ref.py); run build/bench_annot from the repo root.
$(BUILD)/bench_annot: $(BUILD)/bench/bench_annot.o $(BUILD)/librootnet.a
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/bench/bench_annot.o $(BUILD)/librootnet.a $(LDLIBS)

# Data pipeline benchmark (bench/bench_data.c); run bench/bench_data.sh.
$(BUILD)/bench/bench_data: $(BUILD)/bench/bench_data.o $(BUILD)/librootnet.a
	$(CC) $(LDFLAGS) -o $@ $< $(BUILD)/librootnet.a $(LDLIBS)

# ASan/UBSan build of everything in build-asan/, then the whole test suite.
asan:
	$(MAKE) BUILD=build-asan OPT="-O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	    LDFLAGS="-fopenmp -fsanitize=address,undefined" test

# Coverage-guided fuzzing (libFuzzer; clang with ASan + UBSan): every tests/fuzz/fuzz_*.c is built into
# build-fuzz/ against the parsers of the library (compiled with clang, -fsanitize=fuzzer-no-link), then
# `make fuzz` runs each target for FUZZ_SECONDS from its corpus (tests/fuzz/run.sh). -Wno-pass-failed: at -O1 under
# the sanitizers clang cannot honour the `omp simd` requests (a missed optimisation it reports as a warning).
FUZZ_BUILD   := build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -fopenmp -Isrc -MMD -MP \
                -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -Wno-pass-failed
FUZZ_LDFLAGS := -fopenmp -fsanitize=fuzzer,address,undefined
FUZZ_LIB_SRC := $(wildcard src/core/*.c src/data/*.c src/io/*.c src/eval/*.c) src/train/config.c src/train/predict_box.c \
                $(wildcard src/optim/*.c) src/nn/precision.c src/nn/device.c
FUZZ_LIB_OBJ := $(FUZZ_LIB_SRC:%.c=$(FUZZ_BUILD)/%.o)
FUZZ_SRC     := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN     := $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_BUILD)/%)

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_BUILD)/librootnet-fuzz.a: $(FUZZ_LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: $(FUZZ_BUILD)/tests/fuzz/fuzz_%.o $(FUZZ_BUILD)/librootnet-fuzz.a
	$(FUZZ_CC) $(FUZZ_LDFLAGS) -o $@ $< $(FUZZ_BUILD)/librootnet-fuzz.a -ljpeg -lpng -ljansson -lexif -lpthread -lm

fuzz-build: $(FUZZ_BIN)

fuzz: fuzz-build
	FUZZ_BUILD=$(FUZZ_BUILD) bash tests/fuzz/run.sh $(FUZZ_SECONDS)

clean:
	rm -rf build build-asan build-fuzz

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_BIN:=.d) $(BUILD)/bench/bench_convs.d $(BUILD)/bench/bench_annot.d \
	$(BUILD)/bench/bench_data.d $(FUZZ_LIB_OBJ:.o=.d) $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_BUILD)/tests/fuzz/%.d)
