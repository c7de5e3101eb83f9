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
