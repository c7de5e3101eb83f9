# The CPU device's speed benchmark (bench/cpudevice.c): built with the tests, not registered
# with ctest (it measures; tests do not time). It compiles corpus kernels with the CLI and
# runs them with the interpreter of src/cpudevice on one core.
# Run: ./cpudevice_bench [--cli PATH] [--repeat N] [--json]
if(NOT TARGET nbcuda_cli)
  return()
endif()
add_executable(cpudevice_bench ${PROJECT_SOURCE_DIR}/bench/cpudevice.c)
target_compile_options(cpudevice_bench PRIVATE ${NBCUDA_WARNINGS})
target_compile_definitions(cpudevice_bench PRIVATE _GNU_SOURCE
  NBCUDA_SOURCE_DIR="${PROJECT_SOURCE_DIR}" NBCUDA_CLI="$<TARGET_FILE:nbcuda_cli>")
target_link_libraries(cpudevice_bench PRIVATE nbcuda_cpudevice)
