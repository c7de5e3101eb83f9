# The host_calls benchmark (bench/host_calls.c): built with the tests, not registered with
# ctest. Run: NBCUDA_DRIVER=<libcuda or the test driver> ./host_calls
add_executable(host_calls ${PROJECT_SOURCE_DIR}/bench/host_calls.c)
target_compile_options(host_calls PRIVATE ${NBCUDA_WARNINGS})
target_compile_definitions(host_calls PRIVATE _GNU_SOURCE)
target_link_libraries(host_calls PRIVATE nbcuda_static ${CMAKE_DL_LIBS})
# The same rows as a library, for bench/host_py.py to time raw driver calls in its own process
# (host_calls_setup, host_calls_batch); it carries its own copy of nbcuda.
add_library(host_calls_lib SHARED ${PROJECT_SOURCE_DIR}/bench/host_calls.c)
set_target_properties(host_calls_lib PROPERTIES OUTPUT_NAME host_calls C_VISIBILITY_PRESET hidden)
target_compile_options(host_calls_lib PRIVATE ${NBCUDA_WARNINGS})
target_compile_definitions(host_calls_lib PRIVATE _GNU_SOURCE HOST_CALLS_LIBRARY)
target_link_libraries(host_calls_lib PRIVATE nbcuda_static ${CMAKE_DL_LIBS})

# test_host_cli runs the nbcuda binary.
if(TARGET test_host_cli AND TARGET nbcuda_cli)
  add_dependencies(test_host_cli nbcuda_cli)
endif()
