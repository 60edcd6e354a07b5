# matmul: Halide schedules (ops/halide/CMakeLists.txt defines hybridlab_halide; GeneratorParams in halide_generator.cpp).
# CPU. plain: the algorithm as written (reductions at their use, no vectors, no threads); tuned: vectors,
# parallel tasks, tiles, intermediates placed for locality.
hybridlab_halide(hl_matmul plain ${cpu} PARAMS vec=1 tile_o=1 tile_t=1 o_per_task=0)
hybridlab_halide(hl_matmul tuned ${cpu} PARAMS vec=8 tile_o=3 tile_t=4 o_per_task=64 min_tasks=4)
# One token (decode): a 4 x 1 register tile (the 3 x 4 tile computes three padded tokens).
hybridlab_halide(hl_matmul tuned_t1 ${cpu} PARAMS vec=8 tile_o=4 tile_t=1 o_per_task=64)
hybridlab_halide(hl_matmul_q8_0 plain ${cpu} PARAMS vec=1 tile_o=1 tile_t=1 o_per_task=0)
hybridlab_halide(hl_matmul_q8_0 tuned ${cpu} PARAMS vec=8 tile_o=3 tile_t=4 o_per_task=64)
if(HYBRIDLAB_HALIDE_VULKAN)
  hybridlab_halide(hl_matmul gpu_plain ${vk} PARAMS gpu=true gpu_split_k=false gpu_threads=64)
  hybridlab_halide(hl_matmul gpu_tuned ${vk} PARAMS gpu=true gpu_split_k=true gpu_threads=64 gpu_rows=4 gpu_tile_t=4)
endif()
