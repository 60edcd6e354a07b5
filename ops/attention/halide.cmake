# attention: Halide schedules (ops/halide/CMakeLists.txt defines hybridlab_halide; GeneratorParams in halide_generator.cpp).
# CPU. plain: the algorithm as written (reductions at their use, no vectors, no threads); tuned: vectors,
# parallel tasks, tiles, intermediates placed for locality.
hybridlab_halide(hl_attention plain ${cpu} PARAMS vec=1 tile_t=0 transpose_k=false)
hybridlab_halide(hl_attention tuned ${cpu} PARAMS vec=8 tile_t=8 transpose_k=true)
# tuned's build for prompts of whole 8-token tiles (the wrapper picks it): register tiles, the masked triangle skipped.
hybridlab_halide(hl_attention tuned_blocked ${cpu} PARAMS vec=8 tile_t=8 transpose_k=true causal_bounds=true blocked=true
                 reg_keys=2 reg_tokens=4 reg_d=2 reg_out=4)
# tuned's build for one token (decode; the wrapper picks it): scores as dot products on register tiles of 4 keys, the
# cache read in place.
hybridlab_halide(hl_attention tuned_dot ${cpu} PARAMS vec=8 tile_t=1 transpose_k=false dot_scores=true reg_keys=4 reg_d=4)
if(HYBRIDLAB_HALIDE_VULKAN)
  hybridlab_halide(hl_attention gpu_plain ${vk} PARAMS gpu=true transpose_k=false gpu_threads=64 gpu_tile_t=0)
  hybridlab_halide(hl_attention gpu_tuned ${vk} PARAMS gpu=true transpose_k=false gpu_threads=64 gpu_tile_t=4)
endif()
# The blocked build's value-sum tile swept (tokens per tile: reg_out), each point run for every prompt length.
hybridlab_halide_sweep(hl_attention tuned_blocked ${cpu} PARAM reg_out LABEL o VALUES 2 8 PARAMS vec=8 tile_t=8 transpose_k=true
                       causal_bounds=true blocked=true reg_keys=2 reg_tokens=4 reg_d=2)
