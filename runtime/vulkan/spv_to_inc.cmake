# A SPIR-V binary as a C array initializer ({0x07230203, ...}), as glslc -mfmt=c writes it, for the shader registry.
#   cmake -DIN=x.spv -DOUT=x.spv.inc -P spv_to_inc.cmake
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR rem "${n} % 8")
if(rem OR n EQUAL 0)
  message(FATAL_ERROR "${IN}: not a whole number of 32-bit words")
endif()
# Little-endian words: bytes b0 b1 b2 b3 -> 0xb3b2b1b0.
string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1," words "${hex}")
file(WRITE "${OUT}" "{${words}}\n")
