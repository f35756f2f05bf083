# Thin front end over CMake. `make bench` and `make test` are the two commands.
BUILD ?= build
PREFIX ?= /usr/local
JOBS ?= $(shell nproc)
BENCH_ARGS ?= --kernels all

.PHONY: all build configure test test-package bench install clean

all: build

$(BUILD)/CMakeCache.txt:
	scripts/setup.sh
	PATH="$$PATH:/usr/local/cuda/bin" cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

configure: $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# After the tests, the reason each skipped test gave (ctest lists only names).
# Every test but those labelled `package` (python_wheel_install: `pip install .`
# builds the whole library again), which `make test-package` runs.
test: build
	@rc=0; ctest --test-dir $(BUILD) --label-exclude '^package$$' --output-on-failure --output-junit ctest-junit.xml || rc=$$?; \
	python3 scripts/ctest_skips.py $(BUILD)/ctest-junit.xml; exit $$rc

test-package: build
	@rc=0; ctest --test-dir $(BUILD) --label-regex '^package$$' --output-on-failure --output-junit ctest-junit.xml || rc=$$?; \
	python3 scripts/ctest_skips.py $(BUILD)/ctest-junit.xml; exit $$rc

bench: build
	$(BUILD)/tools/hgemm-bench $(BENCH_ARGS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)
