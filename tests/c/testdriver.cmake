# testdriver.cmake — build settings of the software CUDA test driver and its own test.
#
# libnbcuda_testdriver.so implements CUDA driver entry points with cuda.h's exact
# signatures, so it (and test_testdriver, which calls it directly) needs the toolkit's
# cuda.h. Only these two targets see CUDA headers; libnbcuda itself never does.
find_path(NBCUDA_CUDA_INCLUDE_DIR cuda.h
  HINTS $ENV{CUDA_HOME}/include $ENV{CUDA_PATH}/include /usr/local/cuda/include)
if(TARGET nbcuda_testdriver)
  if(NBCUDA_CUDA_INCLUDE_DIR)
    target_include_directories(nbcuda_testdriver PRIVATE ${NBCUDA_CUDA_INCLUDE_DIR}
      ${CMAKE_CURRENT_SOURCE_DIR}/testdriver)
    target_link_libraries(nbcuda_testdriver PRIVATE ${CMAKE_DL_LIBS})
    # Unresolved symbols are a build error, not a load-time surprise (except under the
    # sanitizers, whose runtime a shared library gets from the executable).
    if(NOT NBCUDA_SANITIZE AND NOT CMAKE_C_FLAGS MATCHES "-fsanitize")
      target_link_options(nbcuda_testdriver PRIVATE -Wl,--no-undefined)
    endif()
  else()
    message(WARNING "cuda.h not found (set CUDA_HOME): the test driver cannot be built")
  endif()
endif()
if(TARGET test_testdriver AND NBCUDA_CUDA_INCLUDE_DIR)
  target_include_directories(test_testdriver PRIVATE ${NBCUDA_CUDA_INCLUDE_DIR})
  set_tests_properties(test_testdriver PROPERTIES TIMEOUT 60)
endif()

# td_tables.c is generated from cuda.h and h200_probe.json and committed; this test fails
# when cuda.h (a new toolkit) or the generator changed and the table was not regenerated.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND AND NBCUDA_CUDA_INCLUDE_DIR AND TARGET nbcuda_testdriver)
  add_test(NAME testdriver_tables_fresh
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/testdriver/gen_tables.py
      ${NBCUDA_CUDA_INCLUDE_DIR}/cuda.h ${PROJECT_SOURCE_DIR}/tests/testdriver/h200_probe.json
      --check ${PROJECT_SOURCE_DIR}/tests/testdriver/td_tables.c)
endif()

# The fixture must answer like the real driver: probe_real_driver.py is run against it and
# compared with the answers recorded on an H200 (driver 13000) in h200_probe.json. Python
# cannot dlopen a sanitizer build of the fixture (the runtime comes from the executable), so
# this check runs in the plain builds only.
if(Python3_FOUND AND TARGET nbcuda_testdriver AND NOT NBCUDA_SANITIZE)
  add_test(NAME testdriver_matches_real_driver
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/testdriver/compare_with_real.py
      $<TARGET_FILE:nbcuda_testdriver>)
  set_tests_properties(testdriver_matches_real_driver PROPERTIES TIMEOUT 120)
endif()
