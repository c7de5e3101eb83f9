# The host_calls benchmark (bench/host_calls.c): built with the tests, not registered with
# ctest. Run: NBCUDA_DRIVER=<libcuda or the test driver> ./host_calls
add_executable(host_calls ${PROJECT_SOURCE_DIR}/bench/host_calls.c)
target_compile_options(host_calls PRIVATE ${NBCUDA_WARNINGS})
target_compile_definitions(host_calls PRIVATE _GNU_SOURCE)
target_link_libraries(host_calls PRIVATE nbcuda_static ${CMAKE_DL_LIBS})

# test_host_cli runs the nbcuda binary.
if(TARGET test_host_cli AND TARGET nbcuda_cli)
  add_dependencies(test_host_cli nbcuda_cli)
endif()
