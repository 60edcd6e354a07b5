# shared_expert: Halide schedules (ops/halide/CMakeLists.txt defines hybridlab_halide; GeneratorParams in
# halide_generator.cpp, the matmul schedule space of ops/halide/matmul_schedule.h, as matmul's schedules).
hybridlab_halide(hl_shared_expert plain ${cpu} PARAMS vec=1 tile_o=1 tile_t=1 o_per_task=0)
hybridlab_halide(hl_shared_expert tuned ${cpu} PARAMS vec=8 tile_o=3 tile_t=4 o_per_task=64)
if(HYBRIDLAB_HALIDE_VULKAN)
  hybridlab_halide(hl_shared_expert gpu_plain ${vk} PARAMS gpu=true gpu_split_k=false gpu_threads=64)
  hybridlab_halide(hl_shared_expert gpu_tuned ${vk} PARAMS gpu=true gpu_split_k=true gpu_threads=64 gpu_rows=4 gpu_tile_t=4)
endif()
