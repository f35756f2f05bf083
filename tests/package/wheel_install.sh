#!/bin/sh
# wheel_install.sh SOURCE_DIR WORK_DIR PYTHON
# `pip install .` as a new user would do it: a fresh virtual environment, the
# package built from SOURCE_DIR (scikit-build-core runs CMake and nvcc, and
# libhgemm.so lands inside the package), then, from an empty directory and
# with no PYTHONPATH, HGEMM_LIBRARY or LD_LIBRARY_PATH:
#   - `import hgemm` works, loads the libhgemm.so inside the installed package,
#     and lists the library's kernels and the project's version;
#   - pytest runs the package's tests over the installed package (the CPU
#     ones run; the GPU ones skip without torch or cupy and an sm_90 GPU).
# pip needs the package index for the build backend and pytest. Exit 0 on
# success, 77 (skipped) when Python cannot make a virtual environment here,
# 1 otherwise. WORK_DIR is emptied first and removed on success.
set -u
src=$1
work=$2
python=$3

fail() {
    echo "FAIL (wheel_install): $*"
    echo "(the virtual environment is kept in $work)"
    exit 1
}

rm -rf "$work"
mkdir -p "$work/empty" || fail "cannot create $work"
if ! "$python" -m venv "$work/venv" >"$work/venv.log" 2>&1; then
    cat "$work/venv.log"
    echo "skipped: '$python -m venv' cannot make a virtual environment here (on Debian: apt-get install python3-venv)"
    rm -rf "$work"
    exit 77
fi
py=$work/venv/bin/python

echo "\$ pip install '$src[test]'"
if ! "$py" -m pip install --quiet --disable-pip-version-check --no-cache-dir "$src[test]" \
        >"$work/pip.log" 2>&1; then
    cat "$work/pip.log"
    # No package index here: a fact about the machine, not about the package.
    if grep -Eq "NewConnectionError|Temporary failure in name resolution|Network is unreachable|No matching distribution found for scikit-build-core" "$work/pip.log"; then
        echo "skipped: pip cannot reach the package index for the build backend (scikit-build-core)"
        rm -rf "$work"
        exit 77
    fi
    fail "pip install failed"
fi

cd "$work/empty" || fail "cannot enter $work/empty"
clean_env="env -u PYTHONPATH -u HGEMM_LIBRARY -u LD_LIBRARY_PATH PYTHONDONTWRITEBYTECODE=1"
version=$(sed -n 's/^project(hgemm VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
$clean_env "$py" - "$work/venv" "$version" <<'PY' || fail "import hgemm failed (see above)"
import os, sys
import hgemm
venv, version = os.path.realpath(sys.argv[1]), sys.argv[2]
kernels = hgemm.kernels()
print("import hgemm: %s %s, kernels %s" % (hgemm.__file__, hgemm.__version__, kernels))
print("libhgemm: %s" % hgemm.library_path())
for what, path in (("the package", hgemm.__file__), ("libhgemm.so", hgemm.library_path())):
    if not os.path.realpath(path).startswith(venv + os.sep):
        sys.exit("%s came from %s, not from the virtual environment %s" % (what, path, venv))
if kernels[:2] != ["auto", "v0"]:
    sys.exit("unexpected kernel list %s" % kernels)
if hgemm.__version__ != version:
    sys.exit("the package says version %s, CMakeLists.txt %s" % (hgemm.__version__, version))
PY

echo "\$ pytest $src/python/tests"
$clean_env "$py" -m pytest -q -p no:cacheprovider "$src/python/tests" || fail "pytest failed"

cd / && rm -rf "$work"
echo "PASS (wheel_install)"
