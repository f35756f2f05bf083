# python.cmake: what `pip install .` builds, included by the top-level
# CMakeLists.txt when scikit-build-core drives CMake (SKBUILD is set; see
# pyproject.toml), in place of tools/, tests/, examples/ and install.cmake.
#
# The wheel holds the Python package (python/hgemm, copied by
# scikit-build-core) and one file of the library beside it,
# <site-packages>/hgemm/libhgemm.so, which hgemm/__init__.py loads first.
# A wheel keeps no symbolic links, so the library gets no versioned names:
# no VERSION or SOVERSION, one file whose SONAME is libhgemm.so.
set_property(TARGET hgemm PROPERTY VERSION)
set_property(TARGET hgemm PROPERTY SOVERSION)

# libhgemm.so links the shared CUDA runtime (the one libcudart a process
# shares with torch or CuPy of the same CUDA major version). Where the loader
# would not find it by itself, the runpath names the toolkit it was built
# with.
set_target_properties(hgemm PROPERTIES INSTALL_RPATH "${CUDAToolkit_LIBRARY_DIR}")

install(TARGETS hgemm LIBRARY DESTINATION hgemm)
