# src/python/python.cmake — the `nbcuda` CPython extension module, built from
# src/python/*.c and linked with the static libnbcuda (so the wheel carries one file and
# needs no libnbcuda.so at run time). Included by the root CMakeLists.txt when
# scikit-build-core drives the build (SKBUILD) or with -DNBCUDA_BUILD_PYTHON=ON.
#
# -Wpedantic is left out on purpose: CPython's PyType_Slot tables store function pointers
# in void * fields, which ISO C forbids; warnings are errors under NBCUDA_WERROR as elsewhere.
option(NBCUDA_BUILD_PYTHON "Build the nbcuda CPython extension module" OFF)
if(NOT (SKBUILD OR NBCUDA_BUILD_PYTHON))
  return()
endif()
find_package(Python COMPONENTS Interpreter Development.Module REQUIRED)
file(GLOB NBCUDA_PYTHON_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/python/*.c)
Python_add_library(nbcuda_python MODULE WITH_SOABI ${NBCUDA_PYTHON_SOURCES})
# The module is the package nbcuda whose __init__ is the extension (Python's path finder
# takes nbcuda/__init__.<SOABI>.so as a package, and the loader still calls PyInit_nbcuda),
# so that it can hold nbcuda/__main__.py (`python -m nbcuda`) and its stubs with py.typed.
set_target_properties(nbcuda_python PROPERTIES OUTPUT_NAME __init__ C_VISIBILITY_PRESET hidden
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/python/nbcuda)
target_compile_options(nbcuda_python PRIVATE -Wall -Wextra $<$<BOOL:${NBCUDA_WERROR}>:-Werror>)
target_compile_definitions(nbcuda_python PRIVATE _GNU_SOURCE)
target_include_directories(nbcuda_python PRIVATE ${PROJECT_SOURCE_DIR}/src
  ${PROJECT_SOURCE_DIR}/src/python)
target_link_libraries(nbcuda_python PRIVATE nbcuda_static)
# The C library's public functions (default visibility, for libnbcuda.so) stay private to the
# extension: nothing but PyInit_nbcuda is exported from it.
target_link_options(nbcuda_python PRIVATE -Wl,--exclude-libs,ALL)
if(SKBUILD)
  # Only the package goes into the wheel (install.components = ["python"]): the extension as
  # nbcuda/__init__, and src/python/package/'s files beside it: __main__.py, nbcuda.dask (the
  # Dask serializers, dask.py) and the type stubs of the module and its submodules
  # nbcuda.types and nbcuda.random, marked by py.typed.
  install(TARGETS nbcuda_python LIBRARY DESTINATION nbcuda COMPONENT python)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/python/package/ DESTINATION nbcuda
    COMPONENT python FILES_MATCHING PATTERN "*.pyi" PATTERN "py.typed" PATTERN "__main__.py"
    PATTERN "dask.py")
endif()
