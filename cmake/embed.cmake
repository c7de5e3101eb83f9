# embed.cmake — nbcuda_embed(): a file's bytes as a C array, for the library kernels in
# src/library/*.py (kernel-language source the library compiles like any user kernel).
#
# nbcuda_embed(<file> <symbol> <header>) writes <header> holding
#   static const unsigned char <symbol>[] = {<the file's bytes>, 0};
# (NUL-terminated, so the array is also the text as a C string). file(CONFIGURE) rewrites the
# header only when its content changes, so an unchanged file rebuilds nothing; the file is a
# configure dependency, so editing it re-runs CMake.
function(nbcuda_embed file symbol header)
  file(READ ${file} hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  file(RELATIVE_PATH name ${PROJECT_SOURCE_DIR} ${file})
  file(CONFIGURE OUTPUT ${header} CONTENT
    "/* generated from ${name} by nbcuda_embed (cmake/embed.cmake) */\nstatic const unsigned char ${symbol}[] = {${bytes} 0};\n")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
endfunction()
