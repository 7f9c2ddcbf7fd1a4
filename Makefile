# rootnet build. Targets: all (default), test, bench, asan, fuzz, clean.
CC      ?= gcc
OPT     ?= -O3 -march=native -mprefer-vector-width=512
CFLAGS  += -std=c11 -D_GNU_SOURCE $(OPT) -g -Wall -Wextra -Werror -fopenmp -Isrc -Iinclude -MMD -MP
LDLIBS  += -ljpeg -lpng -ljansson -lz -lexif -lpthread -lm
LDFLAGS += -fopenmp
BUILD   ?= build

# Cairo (src/viz: the demo/predict picture and the loss plot), Debian's libcairo2-dev; its headers as system
# headers so -Werror does not judge them.
CFLAGS  += $(patsubst -I%,-isystem %,$(shell pkg-config --cflags cairo))
LDLIBS  += $(shell pkg-config --libs cairo)

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

# The CUDA device (src/cuda, nn/device.h): librootnet-cuda.so beside the binary and librootnet.so, loaded by
# nn/device.c at run time, so that one binary still runs where there is no GPU, driver or CUDA library. Built
# when nvcc and cuDNN are found under CUDA_HOME (`make CUDA=0` leaves it out). The library is self-contained:
# it links its own hidden copy of the few src/core and src/nn objects it needs (CUDA_CORE), cudart statically
# and cuDNN and NCCL (src/cuda/cuda_comm.c) dynamically, and exports one symbol (src/cuda/cuda.map). sm_90 code plus compute_90 PTX; -fmad=false:
# the kernels compute exactly the arithmetic the host tests check (src/cuda/kernels.h).
CUDA      ?= 1
CUDA_HOME ?= /usr/local/cuda
NVCC      := $(if $(filter 1,$(CUDA)),$(if $(wildcard $(CUDA_HOME)/include/cudnn.h),$(wildcard $(CUDA_HOME)/bin/nvcc)))
ifneq ($(NVCC),)
CFLAGS     += -DRN_HAVE_CUDA
CUDA_LIB   := $(BUILD)/librootnet-cuda.so
CUDA_KERNELS := $(BUILD)/cuda_kernels
CUDA_ARCH  ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
NVCCFLAGS  := -std=c++17 -O3 -g -lineinfo -fmad=false $(CUDA_ARCH) -Isrc -Werror all-warnings \
              -Xcompiler -fPIC,-fvisibility=hidden,-Wall,-Wextra,-Werror -MMD -MP
CUDA_CSRC  := $(wildcard src/cuda/*.c)
CUDA_CUSRC := $(wildcard src/cuda/*.cu)
CUDA_OBJ   := $(CUDA_CSRC:%.c=$(BUILD)/%.o) $(CUDA_CUSRC:%.cu=$(BUILD)/%.cu.o)
CUDA_CORE  := $(BUILD)/src/core/status.o $(BUILD)/src/nn/conv_shape.o
CUDA_LIBS  := -L$(CUDA_HOME)/lib64 -lcudnn -lnccl -lcudart_static -lstdc++ -lpthread -ldl -lrt -lm
$(CUDA_CSRC:%.c=$(BUILD)/%.o): CFLAGS += -fPIC -fvisibility=hidden -isystem $(CUDA_HOME)/include
endif

# ONNX export (src/export/onnx.c): protobuf-c code generated at build time by protoc-c from Debian's
# onnx.proto (libonnx-dev) into $(BUILD)/gen; without protoc-c or the .proto, `export --onnx` says so.
ONNX_PROTO ?= /usr/include/onnx/onnx.proto
ONNX := $(if $(and $(shell command -v protoc-c 2>/dev/null),$(wildcard $(ONNX_PROTO))),1)
ifeq ($(ONNX),1)
CFLAGS += -DRN_HAVE_ONNX -I$(BUILD)/gen
LDLIBS := -lprotobuf-c $(LDLIBS)
ONNX_OBJ := $(BUILD)/gen/onnx.pb-c.o
endif

# MATLAB .mat files (src/eval/pose_metrics.c: the MuPoTS-3D prediction files their evaluation script reads),
# Debian's libmatio-dev: optional, because it brings HDF5 into every link for one file format only the
# MuPoTS evaluation needs; without it (`make MATIO=0`, or the library absent) rn_pose_mat_write says so.
MATIO ?= 1
HAVE_MATIO := $(if $(filter 1,$(MATIO)),$(shell pkg-config --exists matio 2>/dev/null && echo 1))
ifeq ($(HAVE_MATIO),1)
CFLAGS += -DRN_HAVE_MATIO $(patsubst -I%,-isystem %,$(shell pkg-config --cflags matio))
LDLIBS += $(shell pkg-config --libs matio)
endif

# src/data has one level of subfolders more (image, json, sets, load, synth).
LIB_SRC  := $(filter-out src/cli/% src/cpu/% src/ref/% src/cuda/%,$(wildcard src/*/*.c src/data/*/*.c)) $(DEV_SRC)
CLI_SRC  := $(wildcard src/cli/*.c)
TEST_SRC := $(filter-out $(CPU_TESTS),$(wildcard tests/test_*.c))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(ONNX_OBJ)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
DEVICES  := $(strip $(if $(filter 1,$(DNNL)),cpu) $(if $(wildcard src/ref/*.c),ref) $(if $(NVCC),cuda))

# Files that carry camera values, k or targets (readers, box rule, crop, loader,
# metrics, test/predict/demo paths): an implicit float conversion (float to an
# integer, double to float) is an error there; explicit casts are scanned by
# tests/nocast.py.
CAMERA_SRC := $(wildcard src/data/*/*.c src/eval/*.c src/infer/*.c) src/train/trainer.c \
              src/cli/cmd_demo.c src/cli/cmd_predict.c src/cli/cmd_test.c src/cli/cmd_dataset.c src/cli/cmd_inspect.c
$(CAMERA_SRC:%.c=$(BUILD)/%.o): CFLAGS += -Wfloat-conversion

# Library objects are position-independent, so one set of them builds both librootnet.a and
# librootnet.so; -fvisibility=hidden keeps every internal symbol out of the .so (only RN_API
# functions of include/rootnet.h are exported) and lets calls inside the library bind directly,
# without the PLT, so PIC costs the model nothing measurable (README, "C API").
LIB_CFLAGS := -fPIC -fvisibility=hidden
$(LIB_OBJ): CFLAGS += $(LIB_CFLAGS)

# The cpu kernels without errno from sqrtf: the same IEEE square root, but a loop that calls it (Adam)
# vectorises, where errno's slow path (a call for a negative input) otherwise keeps it scalar.
$(BUILD)/src/cpu/kernels.o: CFLAGS += -fno-math-errno

# Every object depends on the compiler flags: $(BUILD)/cflags is rewritten only when they change
# (a different OPT, MPI or DNNL setting, or an upgrade that adds -fPIC), so a stale object built
# with other flags is never linked. STAMP_FLAGS is expanded here, before any target-specific flag.
STAMP_FLAGS := $(CC) $(CFLAGS) | library objects: $(LIB_CFLAGS) | nvcc: $(NVCC) $(NVCCFLAGS)

.PHONY: all test bench asan fuzz fuzz-build clean install uninstall bundle FORCE
all: $(BUILD)/rootnet $(TEST_BIN) $(BUILD)/devices $(BUILD)/librootnet.so $(CUDA_LIB) $(CUDA_KERNELS) $(BUILD)/bench_peak

# The stamps below are rewritten when what they record changes (FORCE), except in the check of
# `make install` (RN_INSTALL_CHECK=1), which reads them as plain files and never rewrites them.
STAMP_DEP := $(if $(RN_INSTALL_CHECK),,FORCE)

# The devices built in, one line ("cpu ref"): tests/run.sh skips the tests that need a missing one.
$(BUILD)/devices: $(STAMP_DEP)
	@mkdir -p $(dir $@)
	@echo '$(DEVICES)' | cmp -s - $@ || echo '$(DEVICES)' > $@

$(BUILD)/cflags: $(STAMP_DEP)
	@mkdir -p $(dir $@)
	@echo '$(STAMP_FLAGS)' | cmp -s - $@ || echo '$(STAMP_FLAGS)' > $@

$(BUILD)/%.o: %.c $(BUILD)/cflags
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/gen/onnx.pb-c.c $(BUILD)/gen/onnx.pb-c.h: $(ONNX_PROTO)
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen -I$(dir $(ONNX_PROTO)) $(notdir $(ONNX_PROTO))
$(BUILD)/gen/onnx.pb-c.o: $(BUILD)/gen/onnx.pb-c.c $(BUILD)/cflags
	$(CC) $(CFLAGS) -c $< -o $@
$(BUILD)/src/export/onnx.o: $(if $(ONNX_OBJ),$(BUILD)/gen/onnx.pb-c.h)

# main.o and the C API are rebuilt when the version changes (version.txt is rewritten only then).
$(BUILD)/src/cli/main.o $(BUILD)/src/api/rootnet.o: CFLAGS += -DRN_VERSION='"$(RN_VERSION)"'
$(BUILD)/src/cli/main.o $(BUILD)/src/api/rootnet.o: $(BUILD)/version.txt
$(BUILD)/version.txt: $(STAMP_DEP)
	@mkdir -p $(dir $@) && echo '$(RN_VERSION)' | cmp -s - $@ || echo '$(RN_VERSION)' > $@

ifneq ($(NVCC),)
$(BUILD)/%.cu.o: %.cu $(BUILD)/cflags
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -MF $(@:.o=.d) -c $< -o $@

# The kernels' GPU harness (bench/cuda_kernels.cu: every launcher against ref, timed), built with the
# library's kernel objects so that it keeps compiling; it runs only on a GPU (bench/device_check.sh).
$(CUDA_KERNELS): $(BUILD)/bench/cuda_kernels.cu.o $(filter %.cu.o,$(CUDA_OBJ)) $(BUILD)/src/ref/ref_ops.o $(BUILD)/src/ref/ref_conv.o
	$(NVCC) $(CUDA_ARCH) -o $@ $^ -Xcompiler -fopenmp -lm

# The test binaries in $(BUILD)/tests find it through the link beside them.
$(CUDA_LIB): $(CUDA_OBJ) $(CUDA_CORE) src/cuda/cuda.map
	$(CC) -shared -Wl,--version-script=src/cuda/cuda.map -Wl,-z,defs -o $@ $(CUDA_OBJ) $(CUDA_CORE) $(CUDA_LIBS)
	@mkdir -p $(BUILD)/tests && ln -sf ../librootnet-cuda.so $(BUILD)/tests/librootnet-cuda.so
endif

# The bundle bench/device_check.sh carries to a GPU machine (shared/NOTES-gpu.md; without libmatio, whose HDF5 the
# GPU checks never need): rootnet, librootnet-cuda.so,
# tests/test_backend_ops and tests/dist_nccl_check (cuda-comm-check, below) built in BUNDLE_BUILD for any x86-64-v3 CPU, without MPI (the check runs one process; that
# machine's libmpi is another build) and by default without the cpu device (BUNDLE_DNNL=1 adds it: libdnnl alone
# is 38 of the 48 MiB the bundle may take, which leaves 0.1 MiB), stripped into BUNDLE/bin with the libraries that
# machine lacks in BUNDLE/lib (bench/bundle.sh; under 48 MiB, checked).
BUNDLE       ?= bundle
BUNDLE_BUILD ?= build-bundle
BUNDLE_DNNL  ?= 0
bundle:
	$(MAKE) --no-print-directory BUILD=$(BUNDLE_BUILD) MPI=0 MATIO=0 DNNL=$(BUNDLE_DNNL) OPT="-O3 -march=x86-64-v3" $(BUNDLE_BUILD)/rootnet \
	    $(BUNDLE_BUILD)/tests/test_backend_ops $(BUNDLE_BUILD)/librootnet-cuda.so $(BUNDLE_BUILD)/cuda-comm/dist_nccl_check
	bash bench/bundle.sh $(BUNDLE_BUILD) $(BUNDLE)

$(BUILD)/librootnet.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# The shared library (the C API of include/rootnet.h): soname librootnet.so.$(RN_SOVERSION), bumped on
# an incompatible ABI change; src/api/rootnet.map exports the rootnet_* functions and nothing else.
RN_SOVERSION  := 0
RN_LIBVERSION := $(RN_SOVERSION).1.0
$(BUILD)/librootnet.so: $(BUILD)/librootnet.so.$(RN_LIBVERSION)
	ln -sf librootnet.so.$(RN_LIBVERSION) $(BUILD)/librootnet.so.$(RN_SOVERSION)
	ln -sf librootnet.so.$(RN_SOVERSION) $@

$(BUILD)/librootnet.so.$(RN_LIBVERSION): $(LIB_OBJ) src/api/rootnet.map
	$(CC) -shared $(LDFLAGS) -Wl,-soname,librootnet.so.$(RN_SOVERSION) -Wl,--version-script=src/api/rootnet.map \
	    -Wl,-z,defs -o $@ $(LIB_OBJ) $(LDLIBS)

# make install [PREFIX=/usr/local] [DESTDIR=staging]: bin/rootnet, include/rootnet.h, lib/librootnet.{so,a},
# lib/librootnet-cuda.so where built (found by bin/rootnet through ../lib) and lib/pkgconfig/rootnet.pc (Libs.private: what a static link of librootnet.a needs). It copies what
# `make BUILD=...` built and never compiles (a rebuild here would use this make's flags, say the default
# ones in build-asan): `make -q` with the stamps read as they are (RN_INSTALL_CHECK) asks whether the
# files are there and newer than their sources, headers and flags stamp, and install refuses if not.
PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR     ?= $(PREFIX)/bin
RN_PC_LIBS := $(filter-out -ljpeg -lpng -ljansson,$(LDLIBS)) -lgomp
RN_INSTALLED := $(BUILD)/rootnet $(BUILD)/librootnet.so $(BUILD)/librootnet.a $(CUDA_LIB)
RN_STALE_MSG := make install: $(RN_INSTALLED): missing or older than the sources or flags; build them first
install: src/api/rootnet.pc.in
	@$(MAKE) --no-print-directory -q RN_INSTALL_CHECK=1 $(RN_INSTALLED) || { echo '$(RN_STALE_MSG)' >&2; exit 1; }
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 755 $(BUILD)/rootnet $(DESTDIR)$(BINDIR)/rootnet
	install -m 644 include/rootnet.h $(DESTDIR)$(INCLUDEDIR)/rootnet.h
	install -m 755 $(BUILD)/librootnet.so.$(RN_LIBVERSION) $(DESTDIR)$(LIBDIR)/
	ln -sf librootnet.so.$(RN_LIBVERSION) $(DESTDIR)$(LIBDIR)/librootnet.so.$(RN_SOVERSION)
	ln -sf librootnet.so.$(RN_SOVERSION) $(DESTDIR)$(LIBDIR)/librootnet.so
	install -m 644 $(BUILD)/librootnet.a $(DESTDIR)$(LIBDIR)/librootnet.a
	$(if $(CUDA_LIB),install -m 755 $(CUDA_LIB) $(DESTDIR)$(LIBDIR)/librootnet-cuda.so)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(RN_LIBVERSION)|' -e 's|@LIBS_PRIVATE@|$(RN_PC_LIBS)|' src/api/rootnet.pc.in \
	    > $(DESTDIR)$(LIBDIR)/pkgconfig/rootnet.pc

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/rootnet $(DESTDIR)$(INCLUDEDIR)/rootnet.h $(DESTDIR)$(LIBDIR)/librootnet.a \
	    $(DESTDIR)$(LIBDIR)/librootnet.so $(DESTDIR)$(LIBDIR)/librootnet.so.$(RN_SOVERSION) \
	    $(DESTDIR)$(LIBDIR)/librootnet.so.$(RN_LIBVERSION) $(DESTDIR)$(LIBDIR)/pkgconfig/rootnet.pc \
	    $(DESTDIR)$(LIBDIR)/librootnet-cuda.so

$(BUILD)/rootnet: $(CLI_OBJ) $(BUILD)/librootnet.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/librootnet.a $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(BUILD)/librootnet.a
	$(CC) $(LDFLAGS) -o $@ $< $(BUILD)/librootnet.a $(LDLIBS)

# test_dist_comm counts rootnet's allocations inside training steps through the linker's --wrap (in LDLIBS: `make asan` sets
# LDFLAGS on the command line, which would drop a target-specific LDFLAGS).
$(BUILD)/tests/test_dist_comm: LDLIBS += -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc

test: all
	BUILD=$(BUILD) bash tests/run.sh

bench: all $(BUILD)/bench_convs $(BUILD)/bench_annot $(BUILD)/bench/bench_data $(BUILD)/bench_peak $(BUILD)/fp16_trace
	BUILD=$(BUILD) bash bench/run.sh

# Per-layer conv benchmark (bench/bench_convs.c); run build/bench_convs --help.
$(BUILD)/bench_convs: $(BUILD)/bench/bench_convs.o $(BUILD)/src/cli/args.o $(BUILD)/src/cli/exit.o $(BUILD)/librootnet.a
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/bench/bench_convs.o $(BUILD)/src/cli/args.o $(BUILD)/src/cli/exit.o $(BUILD)/librootnet.a $(LDLIBS)

# Annotation-load benchmark (bench/bench_annot.c + bench/annot_ref.py); run build/bench_annot from the repo root.
$(BUILD)/bench_annot: $(BUILD)/bench/bench_annot.o $(BUILD)/librootnet.a
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/bench/bench_annot.o $(BUILD)/librootnet.a $(LDLIBS)

# Data pipeline benchmark (bench/bench_data.c); run bench/bench_data.sh.
$(BUILD)/bench/bench_data: $(BUILD)/bench/bench_data.o $(BUILD)/librootnet.a
	$(CC) $(LDFLAGS) -o $@ $< $(BUILD)/librootnet.a $(LDLIBS)

# What an fp16-o2 step would store, step by step, from a float32 run (bench/fp16_trace.c; tools/fp16_sim.py reads it).
$(BUILD)/fp16_trace: $(BUILD)/bench/fp16_trace.o $(BUILD)/librootnet.a
	$(CC) $(LDFLAGS) -o $@ $< $(BUILD)/librootnet.a $(LDLIBS)

# This CPU's fp32 FMA, bf16 and int8 dot-product limits (bench/bench_peak.c); the benchmarks judge against them.
$(BUILD)/bench_peak: $(BUILD)/bench/bench_peak.o $(BUILD)/src/core/cpu_isa.o
	$(CC) $(LDFLAGS) -o $@ $^ -lpthread

# ---- The CUDA device's collectives over NCCL (src/cuda/cuda_comm.h says how cuda_device.c wires them) ----
# For the CUDA device library's rules: compile CUDA_COMM_SRC with the C compiler and CUDA_COMM_CU with nvcc
# into librootnet-cuda.so, linked with CUDA_COMM_LIBS. `make cuda-comm-check` (not part of all) compiles them
# alone with -Werror. src/cuda is kept out of LIB_SRC above: it is the device library's, not librootnet's.
CUDA_HOME       ?= /usr/local/cuda
NVCC            ?= $(CUDA_HOME)/bin/nvcc
CUDA_COMM_SRC   := src/cuda/cuda_comm.c
CUDA_COMM_CU    := src/cuda/cuda_comm_kern.cu
CUDA_COMM_LIBS  := -lnccl
CUDA_COMM_FLAGS := -I$(CUDA_HOME)/include
CUDA_COMM_GENCODE ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
.PHONY: cuda-comm-check
cuda-comm-check: $(BUILD)/cuda-comm/dist_nccl_check
# tests/dist_nccl_check.c: the ops on one GPU (run on a GPU machine, with NCCL on LD_LIBRARY_PATH).
$(BUILD)/cuda-comm/dist_nccl_check: tests/dist_nccl_check.c $(BUILD)/cuda-comm/cuda_comm.o \
	    $(BUILD)/cuda-comm/cuda_comm_kern.o src/core/status.c
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Isrc -Itests $(CUDA_COMM_FLAGS) -c tests/dist_nccl_check.c \
	    -o $(BUILD)/cuda-comm/dist_nccl_check.o
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Isrc -c src/core/status.c -o $(BUILD)/cuda-comm/status.o
	$(NVCC) -o $@ $(BUILD)/cuda-comm/dist_nccl_check.o $(BUILD)/cuda-comm/cuda_comm.o \
	    $(BUILD)/cuda-comm/cuda_comm_kern.o $(BUILD)/cuda-comm/status.o -L$(CUDA_HOME)/lib64 $(CUDA_COMM_LIBS)
$(BUILD)/cuda-comm/cuda_comm.o: $(CUDA_COMM_SRC) src/cuda/cuda_comm.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -fPIC -Isrc $(CUDA_COMM_FLAGS) -c $< -o $@
$(BUILD)/cuda-comm/cuda_comm_kern.o: $(CUDA_COMM_CU) src/cuda/cuda_comm.h
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -std=c++17 -Isrc $(CUDA_COMM_GENCODE) -Xcompiler -fPIC,-Wall,-Wextra,-Werror -Werror all-warnings \
	    -c $< -o $@

# ASan/UBSan build of everything in build-asan/, then the whole test suite.
# The CUDA device is left out: its library links through nvcc without the sanitizers' runtime, and no GPU runs it here.
asan:
	$(MAKE) BUILD=build-asan CUDA=0 OPT="-O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
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
FUZZ_LIB_SRC := $(wildcard src/core/*.c src/data/*/*.c src/io/*.c src/eval/*.c) src/train/config.c src/infer/predict_box.c \
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
	$(FUZZ_CC) $(FUZZ_LDFLAGS) -o $@ $< $(FUZZ_BUILD)/librootnet-fuzz.a -ljpeg -lpng -ljansson -lz -lexif -lpthread -lm

fuzz-build: $(FUZZ_BIN)

fuzz: fuzz-build
	FUZZ_BUILD=$(FUZZ_BUILD) bash tests/fuzz/run.sh $(FUZZ_SECONDS)

clean:
	rm -rf build build-asan build-fuzz $(BUNDLE_BUILD) $(BUNDLE)

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(CUDA_OBJ:.o=.d) $(TEST_BIN:=.d) $(BUILD)/bench/bench_convs.d $(BUILD)/bench/bench_annot.d \
	$(BUILD)/bench/bench_data.d $(BUILD)/bench/bench_peak.d $(BUILD)/bench/fp16_trace.d $(FUZZ_LIB_OBJ:.o=.d) $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_BUILD)/tests/fuzz/%.d)
