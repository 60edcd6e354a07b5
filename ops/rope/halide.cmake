# rope: Halide schedules (ops/halide/CMakeLists.txt defines hybridlab_halide; GeneratorParams in halide_generator.cpp).
# The elementwise schedule space of ops/halide/generator_common.h over (dim, head x token). plain: the algorithm as
# written (scalar, serial); tuned: 8 dims wide, 16 (head, token) rows per parallel task.
hybridlab_halide(hl_rope plain ${cpu} PARAMS vec=1 rows_per_task=0)
hybridlab_halide(hl_rope tuned ${cpu} PARAMS vec=8 rows_per_task=16)
if(HYBRIDLAB_HALIDE_VULKAN)
  hybridlab_halide(hl_rope gpu_plain ${vk} PARAMS gpu=true gpu_threads=64)
  hybridlab_halide(hl_rope gpu_tuned ${vk} PARAMS gpu=true gpu_threads=256)
  # gpu_tuned's threads per block swept (hl_sweeps.h): each point a variant halide-vulkan:rope:gpu_tuned_t<n>.
  hybridlab_halide_sweep(hl_rope gpu_tuned ${vk} PARAM gpu_threads LABEL t VALUES 128 512 PARAMS gpu=true)
endif()
