# The C examples run as tests: examples/kernel_from_source.c compiles examples/saxpy.py,
# launches it twice through nbc_kernel_* and checks the result (on the software test driver
# it checks the compile and that the second launch reused the loaded module, and says why it
# skips the values; tests/gpu/run.sh runs it on the GPU with NBCUDA_TEST_WITH_REAL_DRIVER).
add_test(NAME example_kernel_from_source
  COMMAND kernel_from_source ${PROJECT_SOURCE_DIR}/examples/saxpy.py)
if(TESTDRIVER_SOURCES AND NOT NBCUDA_TEST_WITH_REAL_DRIVER)
  set_tests_properties(example_kernel_from_source PROPERTIES ENVIRONMENT
    "NBCUDA_DRIVER=${NBCUDA_TESTDRIVER_PATH};NBCUDA_TESTDRIVER=${NBCUDA_TESTDRIVER_PATH}")
else()
  # on the GPU the values must have been checked, not skipped: the line is printed only
  # when every element matched, after every other check passed
  set_tests_properties(example_kernel_from_source PROPERTIES
    PASS_REGULAR_EXPRESSION "correct on [0-9]+ elements")
endif()
