# Thin wrapper over CMake presets. `make run` and `make test` set up a fresh
# Debian 12 machine (missing packages via packaging/install-deps.sh) first.
PRESET ?= dev
BUILD_DIR := build/$(PRESET)
JOBS ?= 2
SAMPLE ?= resources/samples/model_sample.oxck

# CI switches, passed to every configure when set (in the environment or on
# the make command line); .ci/run sets the first three to ON.
CI_CACHE_VARS := CKPTSCOPE_REQUIRE_CONFORMANCE CKPTSCOPE_REQUIRE_NUMPY CKPTSCOPE_WERROR \
    CKPTSCOPE_CONFORMANCE_DIR
CMAKE_ARGS += $(foreach v,$(CI_CACHE_VARS),$(if $($(v)),-D$(v)=$($(v))))

.PHONY: all deps configure build run test asan asan-gui bench fuzz fuzz-build fuzz-smoke package screenshots format clean

all: build

deps:
	@./packaging/install-deps.sh

$(BUILD_DIR)/build.ninja: | deps
	cmake --preset $(PRESET) $(CMAKE_ARGS)

configure: deps
	cmake --preset $(PRESET) $(CMAKE_ARGS)

# With CI switches given, an existing build folder is configured again so
# they apply.
build: deps $(BUILD_DIR)/build.ninja
	$(if $(strip $(CMAKE_ARGS)),cmake --preset $(PRESET) $(CMAKE_ARGS))
	cmake --build $(BUILD_DIR) -j$(JOBS)

run: build
	./$(BUILD_DIR)/app/ckptscope $(SAMPLE)

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS)

# Address + undefined behaviour sanitizers over the core and CLI tests.
asan:
	$(MAKE) PRESET=asan test

# The same sanitizers over every test including the GUI ones (offscreen).
# Leak checking is off: Qt and fontconfig keep allocations until exit.
asan-gui:
	ASAN_OPTIONS=detect_leaks=0 $(MAKE) PRESET=asan-gui test

# libFuzzer targets (clang, address + undefined): each runs FUZZ_SECONDS.
# Corpora and crash inputs stay in $(FUZZ_DIR); seeds come from the
# conformance corpus (CKPTSCOPE_CONFORMANCE_DIR) at run time
# (tests/fuzz/run-fuzzers.sh).
FUZZ_DIR ?= build/fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=

fuzz-build: deps
	cmake -S . -B $(FUZZ_DIR) -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCKPTSCOPE_FUZZ=ON \
	    -DCKPTSCOPE_BUILD_GUI=OFF -DCKPTSCOPE_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    $(CMAKE_ARGS)
	cmake --build $(FUZZ_DIR) -j$(JOBS) --target fuzzers

fuzz: fuzz-build
	./tests/fuzz/run-fuzzers.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# A few seconds each: CI checks the targets build, load their seeds and run.
fuzz-smoke:
	$(MAKE) fuzz FUZZ_SECONDS=5

# Micro-benchmarks (Google Benchmark), then each target side by side with its
# reference (bench/compare.sh; docs/PERFORMANCE.md), then the run targets of
# issue 12 (bench/runbench.sh). Inputs are generated once into
# build/release/bench-data (or $$CKPTSCOPE_BENCH_DATA): about 9.9 GB (2.1 GB of it the PyTorch pair,
# 4.3 GB the DCP folders and their single files).
bench:
	$(MAKE) PRESET=release build
	./build/release/bench/ckptscope-bench
	./bench/compare.sh build/release
	./bench/runbench.sh build/release
	./bench/httpbench.sh build/release
	./bench/graphbench.sh build/release
	./bench/ggufbench.sh build/release
	./bench/pytorchbench.sh build/release
	./bench/optimizerbench.sh build/release
	./bench/dcpbench.sh build/release
	./bench/s3bench.sh build/release
	./bench/headerbench.sh build/release
	./bench/binsbench.sh build/release
	./bench/simdbench.sh build/release

# A Release build of what the package holds, the .deb, then the checks a
# distribution runs: lintian and desktop-file-validate fail on any error or
# warning (packaging/check-package.sh).
package:
	$(MAKE) PRESET=package build
	cd build/package && cpack -G DEB
	./packaging/check-package.sh build/package

screenshots: build
	./tools/screenshots.sh $(BUILD_DIR)

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h')

clean:
	rm -rf build
