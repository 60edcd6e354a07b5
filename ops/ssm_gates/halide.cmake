# ssm_gates: Halide schedules (ops/halide/CMakeLists.txt defines hybridlab_halide; GeneratorParams in halide_generator.cpp).
# The elementwise schedule space of ops/halide/generator_common.h. plain: the algorithm as written (scalar, serial);
# tuned: 8 heads wide, 16 tokens per parallel task.
hybridlab_halide(hl_ssm_gates plain ${cpu} PARAMS vec=1 rows_per_task=0)
hybridlab_halide(hl_ssm_gates tuned ${cpu} PARAMS vec=8 rows_per_task=16)
if(HYBRIDLAB_HALIDE_VULKAN)
  hybridlab_halide(hl_ssm_gates gpu_plain ${vk} PARAMS gpu=true gpu_threads=64)
  hybridlab_halide(hl_ssm_gates gpu_tuned ${vk} PARAMS gpu=true gpu_threads=256)
endif()
