# torch.cmake: libhgemm_torch.so, the torch.ops.hgemm operators
# (python/hgemm/csrc/ops.cpp), built where torch is installed.
#
#   HGEMM_TORCH      AUTO (default): build it where python3 imports torch, say
#                    why not otherwise; ON: the same, and a missing torch is an
#                    error; OFF: never.
#   HGEMM_TORCH_DIR  the torch package folder (with include/ and lib/); by
#                    default asked of python3. HGEMM_TORCH_CXX11_ABI (1 or 0)
#                    goes with it where torch cannot be imported.
#
# torch is asked for outside pip's build isolation (PYTHONPATH and
# PYTHONNOUSERSITE unset): `pip install .` builds in an environment that has
# the build backend only, while the extension must match the torch the
# package will run with. The extension is tied to that torch version.
set(HGEMM_TORCH AUTO CACHE STRING "build the PyTorch operators: AUTO, ON or OFF")
set_property(CACHE HGEMM_TORCH PROPERTY STRINGS AUTO ON OFF)
set(HGEMM_TORCH_DIR "" CACHE PATH "the torch package folder (include/, lib/); empty: ask python3")
set(HGEMM_TORCH_CXX11_ABI 1 CACHE STRING "torch's _GLIBCXX_USE_CXX11_ABI where it cannot be asked")

# Sets hgemm_torch_dir and hgemm_torch_abi where the extension can be built.
function(hgemm_find_torch)
  if(HGEMM_TORCH STREQUAL "OFF")
    return()
  endif()
  set(dir "${HGEMM_TORCH_DIR}")
  set(abi "${HGEMM_TORCH_CXX11_ABI}")
  set(why "")
  if(NOT dir)
    if(NOT Python3_EXECUTABLE)
      set(why "no python3")
    else()
      execute_process(
        COMMAND ${CMAKE_COMMAND} -E env --unset=PYTHONPATH --unset=PYTHONNOUSERSITE
                ${Python3_EXECUTABLE} -c
                "import os, torch; print(os.path.dirname(torch.__file__)); print(int(torch._C._GLIBCXX_USE_CXX11_ABI)); print(torch.__version__)"
        OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
      if(rc EQUAL 0)
        string(REPLACE "\n" ";" out "${out}")
        list(GET out 0 dir)
        list(GET out 1 abi)
        list(GET out 2 version)
        message(STATUS "hgemm: the torch operators build against torch ${version} (${dir})")
      else()
        set(why "${Python3_EXECUTABLE} cannot import torch")
      endif()
    endif()
  endif()
  if(NOT why AND NOT EXISTS "${dir}/include/torch/library.h")
    set(why "${dir} has no include/torch/library.h")
  endif()
  if(why)
    if(HGEMM_TORCH STREQUAL "ON")
      message(FATAL_ERROR "HGEMM_TORCH=ON, but ${why} (set HGEMM_TORCH_DIR to the torch package folder)")
    endif()
    message(STATUS "hgemm: no torch operators (${why}); hgemm's Python package then runs on ctypes")
    return()
  endif()
  set(hgemm_torch_dir "${dir}" PARENT_SCOPE)
  set(hgemm_torch_abi "${abi}" PARENT_SCOPE)
endfunction()

hgemm_find_torch()
if(hgemm_torch_dir)
  enable_language(CXX)
  add_library(hgemm_torch SHARED ${PROJECT_SOURCE_DIR}/python/hgemm/csrc/ops.cpp
              ${PROJECT_SOURCE_DIR}/python/hgemm/csrc/grouped.cpp
              ${PROJECT_SOURCE_DIR}/python/hgemm/csrc/fp8.cpp
              ${PROJECT_SOURCE_DIR}/python/hgemm/csrc/wgrad.cpp)
  target_include_directories(hgemm_torch SYSTEM PRIVATE "${hgemm_torch_dir}/include")
  target_include_directories(hgemm_torch PRIVATE ${PROJECT_SOURCE_DIR}/python/hgemm/csrc)
  target_compile_features(hgemm_torch PRIVATE cxx_std_17)
  target_compile_definitions(hgemm_torch PRIVATE _GLIBCXX_USE_CXX11_ABI=${hgemm_torch_abi})
  target_compile_options(hgemm_torch PRIVATE -Wall -Wextra -Werror)
  foreach(name c10 c10_cuda torch torch_cpu torch_cuda)
    find_library(HGEMM_TORCH_LIB_${name} ${name} PATHS "${hgemm_torch_dir}/lib" NO_DEFAULT_PATH REQUIRED)
    target_link_libraries(hgemm_torch PRIVATE ${HGEMM_TORCH_LIB_${name}})
  endforeach()
  target_link_libraries(hgemm_torch PRIVATE hgemm CUDA::cudart)
  # libhgemm.so sits beside it (the wheel, the build tree); torch's libraries
  # are loaded by torch before torch.ops.load_library loads this one.
  set_target_properties(hgemm_torch PROPERTIES BUILD_RPATH "$ORIGIN" INSTALL_RPATH "$ORIGIN"
                        CXX_VISIBILITY_PRESET hidden)
  if(SKBUILD)
    install(TARGETS hgemm_torch LIBRARY DESTINATION hgemm)
  endif()
endif()

# What `pip install .` names as a build target: the extension where it is
# configured, nothing otherwise.
add_custom_target(hgemm_torch_if_found)
if(TARGET hgemm_torch)
  add_dependencies(hgemm_torch_if_found hgemm_torch)
endif()
