# install_consume.cmake: install the build tree into a temporary prefix and
# build and run a small C program against that prefix, the two ways a user
# would: a fresh CMake project doing find_package(hgemm), and
# `cc consumer.c $(pkg-config --cflags --libs hgemm)`, each run with no
# LD_LIBRARY_PATH (the runpaths in what is installed and in hgemm.pc find the
# libraries); then the installed hgemm-bench --version, the same way.
#
#   cmake -DARGS=<file written by tests/package/CMakeLists.txt> -P install_consume.cmake
#
# ARGS sets BUILD_DIR, WORK_DIR, CONSUMER_DIR, CONFIG, VERSION, GENERATOR,
# C_COMPILER, CUDA_ROOT, PKG_CONFIG, LIBDIR, BUILT_FILES and INSTALLED_FILES.
# Everything happens under WORK_DIR (inside the build tree), which is emptied
# first and removed on success; on failure it is kept for a look, and the
# script stops with a message naming the step (cmake -P then exits non-zero).
cmake_minimum_required(VERSION 3.24)

if(NOT ARGS OR NOT EXISTS "${ARGS}")
  message(FATAL_ERROR "install_consume: pass -DARGS=<arguments file>; got '${ARGS}'")
endif()
include("${ARGS}")
# Every program below starts as a user's would, with no LD_LIBRARY_PATH.
unset(ENV{LD_LIBRARY_PATH})

set(PREFIX "${WORK_DIR}/prefix")
set(CMAKE_BUILD "${WORK_DIR}/cmake-consumer")
set(PC_BUILD "${WORK_DIR}/pkg-config-consumer")

# fail(<what went wrong> [<details>]): the details (a command's output) go
# out as they are, then the one-line reason through FATAL_ERROR, which makes
# cmake -P exit non-zero.
function(fail msg)
  if(ARGN)
    message(NOTICE "${ARGN}")
  endif()
  if(EXISTS "${WORK_DIR}")
    string(APPEND msg " (the work files are kept in ${WORK_DIR})")
  endif()
  message(FATAL_ERROR "install_consume: ${msg}")
endfunction()

# run(<what> <command...>): run a command, stop with its output if it fails.
# Its stdout is left in RUN_OUTPUT for the caller.
function(run what)
  execute_process(COMMAND ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL "0")
    string(REPLACE ";" " " cmd "${ARGN}")
    fail("${what} failed (exit status ${rc})"
         "--- ${what} failed: ${cmd}\n--- its stdout:\n${out}--- its stderr:\n${err}---")
  endif()
  set(RUN_OUTPUT "${out}" PARENT_SCOPE)
endfunction()

# run_consumer(<name> <binary>): the program prints hgemm_nt's status string
# and exits 0 when the status is an acceptable one (see consumer.c).
function(run_consumer name binary)
  if(NOT EXISTS "${binary}")
    fail("${name}: the consumer was built but ${binary} is missing")
  endif()
  run("running the ${name} consumer" "${binary}")
  if(NOT RUN_OUTPUT MATCHES "consumer: hgemm_nt -> ")
    fail("${name}: the consumer printed no status line" "--- its output:\n${RUN_OUTPUT}---")
  endif()
  string(STRIP "${RUN_OUTPUT}" out)
  message(STATUS "${name}: ${out}")
endfunction()

# 0. A clean work directory, and the libraries must exist: this test installs
# what the build produced.
file(REMOVE_RECURSE "${WORK_DIR}")
foreach(file IN LISTS BUILT_FILES)
  if(NOT EXISTS "${file}")
    fail("${file} does not exist: build the project before running this test (cmake --build ${BUILD_DIR})")
  endif()
endforeach()
file(MAKE_DIRECTORY "${WORK_DIR}" "${PC_BUILD}")

# 1. Install, and check that everything the package promises is there.
set(config_args "")
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()
run("cmake --install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" ${config_args})
foreach(file IN LISTS INSTALLED_FILES)
  if(NOT EXISTS "${PREFIX}/${file}")
    fail("cmake --install did not install ${file} under ${PREFIX}")
  endif()
endforeach()
list(LENGTH INSTALLED_FILES count)
message(STATUS "installed into ${PREFIX}: the ${count} expected files are there")

# 2. find_package(hgemm): configure and build a fresh project against the
# prefix, linking hgemm::hgemm (consumer_cmake) and hgemm::hgemm_static.
run("configuring the CMake consumer"
    "${CMAKE_COMMAND}" -S "${CONSUMER_DIR}" -B "${CMAKE_BUILD}" -G "${GENERATOR}"
    "-DCMAKE_C_COMPILER=${C_COMPILER}" -DCMAKE_BUILD_TYPE=Release
    "-DCMAKE_PREFIX_PATH=${PREFIX}" "-DCUDAToolkit_ROOT=${CUDA_ROOT}"
    "-DHGEMM_EXPECTED_VERSION=${VERSION}" "-DHGEMM_EXPECTED_PREFIX=${PREFIX}")
run("building the CMake consumer" "${CMAKE_COMMAND}" --build "${CMAKE_BUILD}" --config Release)
foreach(name consumer_cmake consumer_static)
  set(binary "${CMAKE_BUILD}/${name}")
  if(NOT EXISTS "${binary}") # multi-config generators add a directory
    set(binary "${CMAKE_BUILD}/Release/${name}")
  endif()
  run_consumer("find_package (${name})" "${binary}")
endforeach()

# 3. pkg-config: compile with the flags hgemm.pc gives and nothing else.
if(NOT PKG_CONFIG)
  message(STATUS "pkg-config not found: the pkg-config consumer is skipped")
else()
  set(ENV{PKG_CONFIG_PATH} "${PREFIX}/${LIBDIR}/pkgconfig")
  run("pkg-config --modversion hgemm" "${PKG_CONFIG}" --modversion hgemm)
  string(STRIP "${RUN_OUTPUT}" pc_version)
  if(NOT pc_version STREQUAL VERSION)
    fail("hgemm.pc says version '${pc_version}', the build is ${VERSION}")
  endif()
  run("pkg-config --cflags --libs hgemm" "${PKG_CONFIG}" --cflags --libs hgemm)
  string(STRIP "${RUN_OUTPUT}" pc_flags)
  message(STATUS "pkg-config --cflags --libs hgemm: ${pc_flags}")
  separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
  run("compiling the pkg-config consumer"
      "${C_COMPILER}" -std=c11 -Wall -Wextra -Werror "${CONSUMER_DIR}/consumer.c"
      ${pc_flags} -o "${PC_BUILD}/consumer_pc")
  # hgemm.pc's Libs carry a runpath to the installed libhgemm.so and to the
  # CUDA runtime: the program starts with no LD_LIBRARY_PATH (unset above).
  run_consumer("pkg-config" "${PC_BUILD}/consumer_pc")
endif()

# 4. The installed tool starts with no LD_LIBRARY_PATH either.
if(EXISTS "${PREFIX}/bin/hgemm-bench")
  run("running the installed hgemm-bench --version" "${PREFIX}/bin/hgemm-bench" --version)
  string(STRIP "${RUN_OUTPUT}" out)
  if(NOT out MATCHES "^hgemm-bench ${VERSION} ")
    fail("the installed hgemm-bench --version printed '${out}', expected 'hgemm-bench ${VERSION} ...'")
  endif()
  message(STATUS "installed tool: ${out}")
endif()

file(REMOVE_RECURSE "${WORK_DIR}")
message(STATUS "install_consume: passed")
