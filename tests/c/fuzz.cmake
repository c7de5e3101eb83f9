# fuzz.cmake — the libFuzzer targets, built when NBCUDA_FUZZ=ON with clang:
#   cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DNBCUDA_FUZZ=ON
#   build-fuzz/tests/fuzz_frontend -max_total_time=300 -dict=tests/fuzz/python.dict \
#       build-fuzz/tests/fuzz-corpus tests/fuzz/seeds
# The target is compiled together with the library's sources so that all of them carry the
# fuzzer's coverage instrumentation and ASan/UBSan. A short run over the seeds is a ctest
# (fuzz_frontend_smoke) so CI exercises it; new inputs go to the build folder, never to the
# seeds in the source tree. NBCUDA_FUZZ_PIPELINE=1 extends the target to infer and lower.
if(NBCUDA_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(WARNING "NBCUDA_FUZZ needs clang (libFuzzer); fuzz targets not built")
  else()
    set(_fuzz_flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
        -fno-omit-frame-pointer -g)
    add_executable(fuzz_frontend ${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_frontend.c ${NBCUDA_SOURCES})
    target_compile_options(fuzz_frontend PRIVATE ${NBCUDA_WARNINGS} ${_fuzz_flags})
    target_link_options(fuzz_frontend PRIVATE ${_fuzz_flags})
    target_compile_definitions(fuzz_frontend PRIVATE _GNU_SOURCE)
    target_include_directories(fuzz_frontend PRIVATE ${PROJECT_SOURCE_DIR}/include
      ${PROJECT_SOURCE_DIR}/src ${NBCUDA_GENERATED_INCLUDE})
    target_link_libraries(fuzz_frontend PRIVATE Threads::Threads ${CMAKE_DL_LIBS} m)
    set(_fuzz_corpus ${CMAKE_CURRENT_BINARY_DIR}/fuzz-corpus)
    file(MAKE_DIRECTORY ${_fuzz_corpus})
    add_test(NAME fuzz_frontend_smoke
      COMMAND fuzz_frontend -max_total_time=30 -timeout=10 -rss_limit_mb=2048 -max_len=8192
              -dict=${PROJECT_SOURCE_DIR}/tests/fuzz/python.dict
              ${_fuzz_corpus} ${PROJECT_SOURCE_DIR}/tests/fuzz/seeds)
    set_tests_properties(fuzz_frontend_smoke PROPERTIES TIMEOUT 120)
  endif()
endif()
