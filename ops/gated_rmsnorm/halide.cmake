# gated_rmsnorm: Halide schedules (ops/halide/CMakeLists.txt defines hybridlab_halide; GeneratorParams in halide_generator.cpp).
# CPU. plain: the algorithm as written (reductions at their use, no vectors, no threads); tuned: vectors,
# parallel tasks, tiles, intermediates placed for locality.
hybridlab_halide(hl_gated_rmsnorm plain ${cpu} PARAMS vec=1 rows_per_task=0 rfactor_sum=false)
hybridlab_halide(hl_gated_rmsnorm tuned ${cpu} PARAMS vec=8 rows_per_task=16 rfactor_sum=true)
if(HYBRIDLAB_HALIDE_VULKAN)
  hybridlab_halide(hl_gated_rmsnorm gpu_plain ${vk} PARAMS gpu=true gpu_shared=false gpu_threads=64)
  hybridlab_halide(hl_gated_rmsnorm gpu_tuned ${vk} PARAMS gpu=true gpu_shared=true gpu_threads=128)
  # gpu_tuned's threads per block swept (hl_sweeps.h): each point a variant halide-vulkan:gated_rmsnorm:gpu_tuned_t<n>.
  hybridlab_halide_sweep(hl_gated_rmsnorm gpu_tuned ${vk} PARAM gpu_threads LABEL t VALUES 64 256 PARAMS gpu=true gpu_shared=true)
  # and its partial sums added in a tree, fanin at a time (gpu_fanin): halide-vulkan:gated_rmsnorm:gpu_tuned_f<n>.
  hybridlab_halide_sweep(hl_gated_rmsnorm gpu_tuned ${vk} PARAM gpu_fanin LABEL f VALUES 8 16 PARAMS gpu=true gpu_shared=true gpu_threads=128)
  # and for short rows, several rows per block of 32 threads each (gpu_rows): halide-vulkan:gated_rmsnorm:gpu_tuned_r<n>.
  hybridlab_halide_sweep(hl_gated_rmsnorm gpu_tuned ${vk} PARAM gpu_rows LABEL r VALUES 4 8 PARAMS gpu=true gpu_shared=true gpu_threads=32 gpu_fanin=8)
endif()
