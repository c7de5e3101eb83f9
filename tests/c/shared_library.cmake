# tests/c/shared_library.cmake — a program linked with libnbcuda.so (the tests otherwise link
# the static library): the public API resolves and the internals are not exported.
add_executable(shared_library_check ${CMAKE_CURRENT_SOURCE_DIR}/c/shared_library.c)
target_compile_options(shared_library_check PRIVATE ${NBCUDA_WARNINGS})
target_link_libraries(shared_library_check PRIVATE nbcuda ${CMAKE_DL_LIBS})
add_test(NAME shared_library_exports COMMAND shared_library_check $<TARGET_FILE:nbcuda>)
if(TESTDRIVER_SOURCES AND NOT NBCUDA_TEST_WITH_REAL_DRIVER)
  add_dependencies(shared_library_check nbcuda_testdriver)
  set_tests_properties(shared_library_exports PROPERTIES
    ENVIRONMENT "NBCUDA_DRIVER=${NBCUDA_TESTDRIVER_PATH}")
endif()
