# Thin front end over CMake. `make bench` and `make test` are the two commands.
BUILD ?= build
PREFIX ?= /usr/local
JOBS ?= $(shell nproc)
BENCH_ARGS ?= --kernels all

.PHONY: all build configure test bench install clean

all: build

$(BUILD)/CMakeCache.txt:
	scripts/setup.sh
	PATH="$$PATH:/usr/local/cuda/bin" cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

configure: $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	ctest --test-dir $(BUILD) --output-on-failure

bench: build
	$(BUILD)/tools/hgemm-bench $(BENCH_ARGS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)
