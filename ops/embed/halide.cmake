# embed: Halide schedules (ops/halide/CMakeLists.txt defines hybridlab_halide; GeneratorParams in halide_generator.cpp,
# the elementwise schedule space of ops/halide/generator_common.h). plain: scalar, serial; tuned: 8-wide along a row,
# 4 tokens per parallel task; GPU: a thread per value.
hybridlab_halide(hl_embed plain ${cpu} PARAMS vec=1 rows_per_task=0)
hybridlab_halide(hl_embed tuned ${cpu} PARAMS vec=8 rows_per_task=4)
if(HYBRIDLAB_HALIDE_VULKAN)
  hybridlab_halide(hl_embed gpu_plain ${vk} PARAMS gpu=true gpu_threads=64)
  hybridlab_halide(hl_embed gpu_tuned ${vk} PARAMS gpu=true gpu_threads=256)
endif()
