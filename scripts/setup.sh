#!/usr/bin/env bash
# setup.sh: make sure the build tools hgemm needs are present; install the
# missing ones from Debian/Ubuntu packages. A no-op where everything is there.
# The CUDA toolkit (nvcc 12.4 or newer, cuBLAS) must already be installed: it
# is looked for on PATH and in /usr/local/cuda/bin.
set -euo pipefail

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v make >/dev/null || need+=(make)
command -v cc >/dev/null || need+=(gcc)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v python3 >/dev/null || need+=(python3)
# .ci/run's sanitizer build and fuzz target: clang with its runtimes (libFuzzer).
command -v clang >/dev/null || need+=(clang)
if ! command -v clang >/dev/null || ! ls "$(clang -print-runtime-dir)"/libclang_rt.fuzzer-*.a >/dev/null 2>&1; then
    need+=(libclang-rt-dev)
fi
# `pip install .` into a virtual environment (a test does it): Debian's python3
# keeps venv and ensurepip in a package of their own.
if ! command -v python3 >/dev/null || ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    need+=(python3-venv)
fi

if ((${#need[@]})); then
    echo "setup: installing ${need[*]}" >&2
    if [ "$(id -u)" = 0 ]; then sudo=(); else sudo=(sudo); fi
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${need[@]}"
fi

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "setup: nvcc not found: install the CUDA toolkit (12.4 or newer) first" >&2
    exit 1
fi
