# matmul: Halide schedules (ops/halide/CMakeLists.txt defines hybridlab_halide; GeneratorParams in halide_generator.cpp).
# CPU. plain: the algorithm as written (reductions at their use, no vectors, no threads); tuned: vectors,
# parallel tasks, tiles, intermediates placed for locality.
hybridlab_halide(hl_matmul plain ${cpu} PARAMS vec=1 tile_o=1 tile_t=1 o_per_task=0)
hybridlab_halide(hl_matmul tuned ${cpu} PARAMS vec=8 tile_o=4 tile_t=2 o_per_task=64)
# One token (decode; tuned's pick at T = 1): a 4 x 1 register tile (the 4 x 2 tile computes a second, padded token).
hybridlab_halide(hl_matmul tuned_t1 ${cpu} PARAMS vec=8 tile_o=4 tile_t=1 o_per_task=64)
hybridlab_halide(hl_matmul_q8_0 plain ${cpu} PARAMS vec=1 tile_o=1 tile_t=1 o_per_task=0)
hybridlab_halide(hl_matmul_q8_0 tuned ${cpu} PARAMS vec=8 tile_o=4 tile_t=2 o_per_task=64)
if(HYBRIDLAB_HALIDE_VULKAN)
  hybridlab_halide(hl_matmul gpu_plain ${vk} PARAMS gpu=true gpu_split_k=false gpu_threads=64)
  hybridlab_halide(hl_matmul gpu_tuned ${vk} PARAMS gpu=true gpu_split_k=true gpu_threads=64 gpu_rows=4 gpu_tile_t=4)
endif()
