# moe_experts: Halide schedules (ops/halide/CMakeLists.txt defines hybridlab_halide; GeneratorParams in halide_generator.cpp).
# CPU. plain: the algorithm as written (reductions at their use, no vectors, no threads); tuned: vectors,
# parallel tasks, tiles, intermediates placed for locality.
hybridlab_halide(hl_moe_experts plain ${cpu} PARAMS vec=1 rows_per_task=0)
hybridlab_halide(hl_moe_experts tuned ${cpu} PARAMS vec=8 rows_per_task=4 tile_f=8 tile_h=8)
# tuned on row tiles of one expert (2 or 4 rows: the wrapper picks by how much padding the routes need)
hybridlab_halide(hl_moe_experts tuned_p2 ${cpu} PARAMS vec=8 rows_per_task=8 tile_p=2 tile_f=3 tile_h=4)
hybridlab_halide(hl_moe_experts tuned_p4 ${cpu} PARAMS vec=8 rows_per_task=16 tile_p=4 tile_f=3 tile_h=3)
if(HYBRIDLAB_HALIDE_VULKAN)
  hybridlab_halide(hl_moe_experts gpu_plain ${vk} PARAMS packed=false gpu=true gpu_threads=64 gpu_split=false)
  hybridlab_halide(hl_moe_experts gpu_tuned ${vk} PARAMS packed=false gpu=true gpu_threads=64 gpu_split=true gpu_rows=4 gpu_tile_p=4)
endif()
# tuned's register tiles swept: outputs of gate and up per tile (tile_f), of down (tile_h).
hybridlab_halide_sweep(hl_moe_experts tuned ${cpu} PARAM tile_f LABEL f VALUES 2 4 PARAMS vec=8 rows_per_task=4 tile_h=8)
hybridlab_halide_sweep(hl_moe_experts tuned ${cpu} PARAM tile_h LABEL h VALUES 4 16 PARAMS vec=8 rows_per_task=4 tile_f=8)
