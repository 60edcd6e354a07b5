# add_rmsnorm: Halide schedules (ops/halide/CMakeLists.txt defines hybridlab_halide; GeneratorParams in halide_generator.cpp),
# each for one addend and for two (two=true). CPU. plain: the algorithm as written (scalar, serial); tuned: 8 wide,
# 16 rows per parallel task, the sum of squares in 8 lanes. GPU (one kernel). plain: a thread per
# row; tuned: a block of 128 threads per row, partial sums in shared memory.
foreach(addends one two)
  if(addends STREQUAL "two")
    set(two two=true)
    set(sfx _two)
  else()
    set(two two=false)
    set(sfx "")
  endif()
  hybridlab_halide(hl_add_rmsnorm plain${sfx} ${cpu} PARAMS ${two} vec=1 rows_per_task=0 rfactor_sum=false)
  hybridlab_halide(hl_add_rmsnorm tuned${sfx} ${cpu} PARAMS ${two} vec=8 rows_per_task=16 rfactor_sum=true)
  if(HYBRIDLAB_HALIDE_VULKAN)
    hybridlab_halide(hl_add_rmsnorm gpu_plain${sfx} ${vk} PARAMS ${two} gpu=true gpu_shared=false gpu_threads=64)
    hybridlab_halide(hl_add_rmsnorm gpu_tuned${sfx} ${vk} PARAMS ${two} gpu=true gpu_shared=true gpu_threads=128)
  endif()
endforeach()
