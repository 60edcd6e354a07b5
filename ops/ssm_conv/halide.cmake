# ssm_conv: Halide schedules (ops/halide/CMakeLists.txt defines hybridlab_halide; GeneratorParams in halide_generator.cpp).
# CPU. plain: the algorithm as written (reductions at their use, no vectors, no threads); tuned: vectors,
# parallel tasks, tiles, intermediates placed for locality.
hybridlab_halide(hl_ssm_conv plain ${cpu} PARAMS vec=1 t_per_task=0 transpose_w=false)
hybridlab_halide(hl_ssm_conv tuned ${cpu} PARAMS vec=8 c_per_task=512)
if(HYBRIDLAB_HALIDE_VULKAN)
  hybridlab_halide(hl_ssm_conv gpu_plain ${vk} PARAMS gpu=true gpu_tile_c=64 gpu_tile_t=1 gpu_shared_w=false)
  hybridlab_halide(hl_ssm_conv gpu_tuned ${vk} PARAMS gpu=true gpu_tile_c=128 gpu_tile_t=8 gpu_window_regs=true)
  # gpu_tuned's tokens per thread swept (hl_sweeps.h): halide-vulkan:ssm_conv:gpu_tuned_t<n>.
  hybridlab_halide_sweep(hl_ssm_conv gpu_tuned ${vk} PARAM gpu_tile_t LABEL t VALUES 4 16 PARAMS gpu=true gpu_tile_c=128 gpu_window_regs=true)
endif()
