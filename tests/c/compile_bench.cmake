# The compile-time benchmark (bench/compile.c): built with the tests, not registered with
# ctest. It reads the corpus from the source tree and calls the compiler's internal phase
# timing (nbc__compile_ex) and nbc__nvvm_compile, hence the src/ include path.
# Run: ./compile_bench [--cc 9.0] [--repeat N] [--case NAME] [--phases] [--json]
add_executable(compile_bench ${PROJECT_SOURCE_DIR}/bench/compile.c)
target_compile_options(compile_bench PRIVATE ${NBCUDA_WARNINGS})
target_compile_definitions(compile_bench PRIVATE _GNU_SOURCE
  NBCUDA_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_include_directories(compile_bench PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(compile_bench PRIVATE nbcuda_static ${CMAKE_DL_LIBS})
