# tests/c/docs_reference.cmake — the C API reference (docs/, generated from include/nbcuda.h)
# has an entry for every nbc_ function the header declares. Needs only a Python 3.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND)
  add_test(NAME docs_c_reference
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/docs/check_c_reference.py --self-test)
endif()
