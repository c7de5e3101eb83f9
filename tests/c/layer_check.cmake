# tests/c/layer_check.cmake — the layer check (tools/check_layers.py): every #include "..." in
# src/ and tools/ points down the layers (docs/contributing.md, "Layers"). Needs only a Python 3.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND)
  add_test(NAME layer_check
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/check_layers.py
      --root ${PROJECT_SOURCE_DIR})
  add_test(NAME layer_check_self_test
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/check_layers.py --self-test)
endif()
