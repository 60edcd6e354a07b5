# slice: Halide schedules (ops/halide/CMakeLists.txt defines hybridlab_halide; GeneratorParams in halide_generator.cpp).
# The elementwise schedule space of ops/halide/generator_common.h. plain: the algorithm as written (scalar, serial);
# tuned: 8-wide along a row, 16 rows per parallel task.
hybridlab_halide(hl_slice plain ${cpu} PARAMS vec=1 rows_per_task=0)
hybridlab_halide(hl_slice tuned ${cpu} PARAMS vec=8 rows_per_task=16)
if(HYBRIDLAB_HALIDE_VULKAN)
  hybridlab_halide(hl_slice gpu_plain ${vk} PARAMS gpu=true gpu_threads=64)
  hybridlab_halide(hl_slice gpu_tuned ${vk} PARAMS gpu=true gpu_threads=256)
endif()
