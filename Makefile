# Thin wrapper over CMake presets. `make run` and `make test` set up a fresh
# Debian 12 machine (missing packages via packaging/install-deps.sh) first.
PRESET ?= dev
BUILD_DIR := build/$(PRESET)
JOBS ?= 2
SAMPLE ?= resources/samples/model_sample.oxck

.PHONY: all deps configure build run test asan bench fuzz package screenshots format clean

all: build

deps:
	@./packaging/install-deps.sh

$(BUILD_DIR)/build.ninja: | deps
	cmake --preset $(PRESET)

configure: deps
	cmake --preset $(PRESET)

build: deps $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j$(JOBS)

run: build
	./$(BUILD_DIR)/app/ckptscope $(SAMPLE)

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS)

# Address + undefined behaviour sanitizers over the core and CLI tests.
asan:
	$(MAKE) PRESET=asan test

bench:
	$(MAKE) PRESET=release build
	./build/release/bench/ckptscope-bench

package:
	$(MAKE) PRESET=release build
	cd build/release && cpack -G DEB

screenshots: build
	./tools/screenshots.sh $(BUILD_DIR)

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h')

clean:
	rm -rf build
