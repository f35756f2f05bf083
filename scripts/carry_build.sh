#!/usr/bin/env bash
# carry_build.sh: build here what device-check.sh builds on the device, and
# pack it small enough to travel with the working tree.
#
#   scripts/carry_build.sh            (then: device run with carry ["build-carry"] and the
#                                      step `carried` in place of `build`)
#   PHASE=1 scripts/carry_build.sh    (also build-phase/'s hgemm-phase-timer, for the phase step)
#
# Configures and builds build-device/ (Release, as device-check's build step
# does) and writes build-carry/build.tar.xz: every CTest file, executable and
# shared library of that tree, and the folder it was built in
# (build-carry/root) and the Python the CTest files name (build-carry/python),
# so that device-check's `carried` step can unpack it and point the CTest
# files at the device's copy and Python. Shared libraries go with their
# links (libhgemm_nccl.so.0 is one: without it the NCCL tests cannot
# start). The test programs link hgemm statically, so they hold the same
# kernels many times: xz with a large window keeps the archive a few MB. Everything the device would build is
# built from this checkout: commit first, and the digest device-check prints
# still names the sources.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
gen=() # Ninja where there is one, unless build-device/ was configured with another generator
[ ! -f build-device/CMakeCache.txt ] && command -v ninja >/dev/null && gen=(-G Ninja)
# runpaths relative to each binary ($ORIGIN): the tree is unpacked under another folder there
cmake -S . -B build-device "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_BUILD_RPATH_USE_ORIGIN=ON >/dev/null
cmake --build build-device -j "$(nproc)"
mkdir -p build-carry
printf '%s\n' "$here" >build-carry/root
grep -ho '"[^"]*/python3[^"]*"' -r build-device --include=CTestTestfile.cmake | tr -d '"' | sort -u |
    head -1 >build-carry/python
find build-device \( -type f -o -type l \) \( -name CTestTestfile.cmake -o -perm -u+x -o -name '*.so*' \) \
    ! -path '*/CMakeFiles/*' | sort >build-carry/files
# PHASE=1: also the diagnostic build's phase timer (device-check's phase step
# then runs it instead of building build-phase/ on the device)
if [ "${PHASE:-0}" = 1 ]; then
    cmake -S . -B build-phase "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DHGEMM_PHASE_TIMER=ON >/dev/null
    cmake --build build-phase --target hgemm-phase-timer -j "$(nproc)"
    # src/v8/all.cu with the phase clocks: its ptxas reports (no spill, no serialized wgmma)
    ctest --test-dir build-phase -R '^ptxas_kernels$' --output-on-failure
    echo build-phase/tools/hgemm-phase-timer >>build-carry/files
fi
tar cf - -T build-carry/files | xz -9 -T0 >build-carry/build.tar.xz
echo "carry_build: $(wc -l <build-carry/files) files, $(du -h build-carry/build.tar.xz | cut -f1) in build-carry/build.tar.xz"
