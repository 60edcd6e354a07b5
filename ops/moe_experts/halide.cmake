# moe_experts: Halide schedules (ops/halide/CMakeLists.txt defines hybridlab_halide; GeneratorParams in halide_generator.cpp).
# CPU. plain: the algorithm as written (reductions at their use, no vectors, no threads); tuned: vectors,
# parallel tasks, tiles, intermediates placed for locality.
hybridlab_halide(hl_moe_experts plain ${cpu} PARAMS vec=1 rows_per_task=0)
hybridlab_halide(hl_moe_experts tuned ${cpu} PARAMS vec=8 rows_per_task=4)
if(HYBRIDLAB_HALIDE_VULKAN)
  hybridlab_halide(hl_moe_experts gpu_plain ${vk} PARAMS packed=false gpu=true gpu_threads=64 gpu_split=false)
  hybridlab_halide(hl_moe_experts gpu_tuned ${vk} PARAMS packed=false gpu=true gpu_threads=64 gpu_split=true gpu_rows=4 gpu_tile_p=4)
endif()
