# install.cmake: what `cmake --install` (and `make install PREFIX=...`) puts
# under the prefix, included by the top-level CMakeLists.txt after tools/ and
# tests/ are added, so every target named here already exists.
#
#   <prefix>/lib/libhgemm.so*, libhgemm.a     the shared and the static library
#   <prefix>/include/hgemm.h                  the public API
#   <prefix>/bin/hgemm-bench                  the benchmark CLI, when it is built
#   <prefix>/lib/cmake/hgemm/                 find_package(hgemm): hgemm::hgemm,
#                                             hgemm::hgemm_static, version file
#   <prefix>/lib/pkgconfig/hgemm.pc           pkg-config --cflags --libs hgemm
#
# ("lib" is CMAKE_INSTALL_LIBDIR: lib64 or lib/<multiarch> on some systems.)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(HGEMM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/hgemm)

# Both libraries go into one export set, so the installed package gives
# hgemm::hgemm (shared) and hgemm::hgemm_static. The header travels as a plain
# file: the targets' INSTALL_INTERFACE include directory already points at it.
install(TARGETS hgemm hgemm_static
  EXPORT hgemmTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/hgemm.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# What the project installs finds what it links without LD_LIBRARY_PATH: the
# CUDA libraries through a runpath to the toolkit it was built with (they are
# often not on the loader's default path), and the tool, should it link
# libhgemm.so rather than libhgemm.a, the library one directory up, wherever
# the prefix is. The tool is defined in tools/ and may not exist in every tree.
set_target_properties(hgemm PROPERTIES INSTALL_RPATH "${CUDAToolkit_LIBRARY_DIR}")
if(TARGET hgemm-bench)
  set_target_properties(hgemm-bench PROPERTIES
    INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR};${CUDAToolkit_LIBRARY_DIR}")
  install(TARGETS hgemm-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# libhgemm.a holds nvcc's host code, which needs the C++ runtime of nvcc's
# host compiler. A program linked by the C linker does not get it by itself,
# so both the CMake package and hgemm.pc name it: the one CMake saw nvcc link
# (libstdc++ with g++).
set(HGEMM_CXX_RUNTIME "")
foreach(lib stdc++ c++)
  if(NOT HGEMM_CXX_RUNTIME AND lib IN_LIST CMAKE_CUDA_IMPLICIT_LINK_LIBRARIES)
    set(HGEMM_CXX_RUNTIME ${lib})
  endif()
endforeach()

# The CMake package. The targets file records that the libraries link
# CUDA::cudart (and, for the static one, Threads::Threads); hgemmConfig.cmake
# finds those before it loads the targets.
install(EXPORT hgemmTargets
  NAMESPACE hgemm::
  FILE hgemmTargets.cmake
  DESTINATION ${HGEMM_CMAKE_DIR})
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/hgemmConfig.cmake.in
  ${PROJECT_BINARY_DIR}/hgemmConfig.cmake
  INSTALL_DESTINATION ${HGEMM_CMAKE_DIR})
# Before 1.0 a minor release may change the API, so only the same major.minor
# satisfies a request: find_package(hgemm 0.1) accepts 0.1.x, not 0.2.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/hgemmConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/hgemmConfig.cmake
  ${PROJECT_BINARY_DIR}/hgemmConfigVersion.cmake
  DESTINATION ${HGEMM_CMAKE_DIR})

# pkg-config. hgemm.h includes cuda_runtime_api.h and the library links the
# CUDA runtime, and the toolkit ships no .pc file of its own, so hgemm.pc names
# the toolkit directories found at configure time. The prefix is computed from
# the .pc file's own location (${pcfiledir}), so the same file is right under
# any --prefix, DESTDIR or a copied tree.
function(hgemm_pc_dir var dir)
  if(IS_ABSOLUTE "${dir}")
    set(${var} "${dir}" PARENT_SCOPE)
  else()
    set(${var} "\${prefix}/${dir}" PARENT_SCOPE)
  endif()
endfunction()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(HGEMM_PC_PREFIX "${CMAKE_INSTALL_PREFIX}") # not relocatable: the user chose so
else()
  # One ".." per component of <libdir>/pkgconfig: lib/pkgconfig -> ../..
  file(RELATIVE_PATH HGEMM_PC_UP "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
  string(REGEX REPLACE "/$" "" HGEMM_PC_UP "${HGEMM_PC_UP}")
  set(HGEMM_PC_PREFIX "\${pcfiledir}/${HGEMM_PC_UP}")
endif()
hgemm_pc_dir(HGEMM_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
hgemm_pc_dir(HGEMM_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
set(HGEMM_PC_CUDA_CFLAGS "")
foreach(dir IN LISTS CUDAToolkit_INCLUDE_DIRS)
  string(APPEND HGEMM_PC_CUDA_CFLAGS " -I${dir}")
endforeach()
set(HGEMM_PC_CUDA_LIBS "-L${CUDAToolkit_LIBRARY_DIR} -Wl,-rpath,${CUDAToolkit_LIBRARY_DIR} -lcudart")
set(HGEMM_PC_LIBS_PRIVATE "-lpthread")
if(HGEMM_CXX_RUNTIME)
  string(PREPEND HGEMM_PC_LIBS_PRIVATE "-l${HGEMM_CXX_RUNTIME} ")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/hgemm.pc.in ${PROJECT_BINARY_DIR}/hgemm.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/hgemm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
