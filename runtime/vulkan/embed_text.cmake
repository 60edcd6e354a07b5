# Build-time helper of hybridlab_add_shaders: writes the text of IN as a C++ raw string literal to OUT,
# so the GLSL sources are in the binary for run-time compilation.
#   cmake -DIN=ops/<op>/x.comp -DOUT=x.comp.txt.inc -P embed_text.cmake
file(READ "${IN}" text)
string(FIND "${text}" ")hl_glsl\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )hl_glsl\"")
endif()
file(WRITE "${OUT}" "R\"hl_glsl(${text})hl_glsl\"\n")
