# ssm_scan: Halide schedules (ops/halide/CMakeLists.txt defines hybridlab_halide; GeneratorParams in halide_generator.cpp).
# CPU. plain: the algorithm as written (reductions at their use, no vectors, no threads); tuned: vectors,
# parallel tasks, tiles, intermediates placed for locality.
hybridlab_halide(hl_ssm_scan plain ${cpu} PARAMS chunk=64 vec=1 parallel=false locality=false)
hybridlab_halide(hl_ssm_scan tuned ${cpu} PARAMS chunk=64 vec=8 parallel=true locality=true)
hybridlab_halide(hl_ssm_scan tuned_c16 ${cpu} PARAMS chunk=16 vec=8 parallel=true locality=true)
# One token in the recurrent form (decode; tuned's pick at T = 1): vectors along d_v, tasks over value heads.
hybridlab_halide(hl_ssm_scan_step tuned ${cpu} PARAMS vec=8 parallel=true)
if(HYBRIDLAB_HALIDE_VULKAN)
  hybridlab_halide(hl_ssm_scan gpu_plain ${vk} PARAMS chunk=64 gpu=true gpu_threads=64 gpu_shared=false gpu_tile_r=1)
  hybridlab_halide(hl_ssm_scan gpu_tuned ${vk} PARAMS chunk=64 gpu=true gpu_threads=64 gpu_shared=true gpu_tile_r=4)
endif()
