# The NVTX tool library the tests load through NVTX_INJECTION64_PATH (tests/c/nvtx_tool.c),
# and test_nvtx run with it.
add_library(nbcuda_nvtx_tool SHARED ${CMAKE_CURRENT_SOURCE_DIR}/c/nvtx_tool.c)
target_compile_options(nbcuda_nvtx_tool PRIVATE ${NBCUDA_WARNINGS})
target_include_directories(nbcuda_nvtx_tool SYSTEM PRIVATE ${PROJECT_SOURCE_DIR}/third_party)
target_link_libraries(nbcuda_nvtx_tool PRIVATE Threads::Threads)
add_dependencies(test_nvtx nbcuda_nvtx_tool)
set_property(TEST test_nvtx APPEND PROPERTY ENVIRONMENT
  "NVTX_INJECTION64_PATH=$<TARGET_FILE:nbcuda_nvtx_tool>")
