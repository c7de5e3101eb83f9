# tests/c/build_options.cmake — a user's build (no options) compiles without -Werror, so a
# newer compiler's new warning never breaks `cmake` or `pip install`; the project's own
# builds turn it on with -DNBCUDA_WERROR=ON (tests/run_all.sh).
#
# Included by tests/CMakeLists.txt, it registers the test; run as a script (cmake -P) by
# that test, it configures nbcuda as a user would and fails if any target's compile flags
# hold -Werror.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  add_test(NAME user_build_has_no_werror
    COMMAND ${CMAKE_COMMAND} -DSOURCE=${PROJECT_SOURCE_DIR}
            -DBINARY=${CMAKE_CURRENT_BINARY_DIR}/user_build
            -P ${CMAKE_CURRENT_LIST_FILE})
  return()
endif()

file(REMOVE_RECURSE ${BINARY})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE} -B ${BINARY} -DNBCUDA_BUILD_TESTS=OFF
  RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring a user build failed (${rc})")
endif()
file(GLOB_RECURSE flag_files ${BINARY}/CMakeFiles/*/flags.make)
if(NOT flag_files)
  message(FATAL_ERROR "no flags.make under ${BINARY}: cannot check the user build's flags")
endif()
foreach(f ${flag_files})
  file(STRINGS ${f} lines REGEX "-Werror")
  if(lines)
    message(FATAL_ERROR "${f}: a user build compiles with -Werror: ${lines}")
  endif()
endforeach()
message(STATUS "user build: no -Werror in ${BINARY}")
