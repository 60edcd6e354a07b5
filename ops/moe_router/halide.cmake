# moe_router: Halide schedules (ops/halide/CMakeLists.txt defines hybridlab_halide; GeneratorParams in
# halide_generator.cpp). plain: every stage once per token, serial, scalar; tuned: 4 tokens per parallel task, the
# per-expert stages 8 wide; GPU: the ranks a thread per (expert, token) in blocks of 64 or 256, p and the slots recomputed
# where used (with them as device intermediates too, a call after one with more slots went wrong on lavapipe).
hybridlab_halide(hl_moe_router plain ${cpu} PARAMS vec=1 rows_per_task=0)
hybridlab_halide(hl_moe_router tuned ${cpu} PARAMS vec=8 rows_per_task=4)
if(HYBRIDLAB_HALIDE_VULKAN)
  hybridlab_halide(hl_moe_router gpu_plain ${vk} PARAMS gpu=true gpu_threads=64)
  hybridlab_halide(hl_moe_router gpu_tuned ${vk} PARAMS gpu=true gpu_threads=256)
endif()
