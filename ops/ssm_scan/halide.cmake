# ssm_scan: Halide schedules (ops/halide/CMakeLists.txt defines hybridlab_halide; GeneratorParams in halide_generator.cpp).
# CPU. plain: the algorithm as written (reductions at their use, no vectors, no threads); tuned: vectors,
# parallel tasks, tiles, intermediates placed for locality.
hybridlab_halide(hl_ssm_scan plain ${cpu} PARAMS chunk=64 vec=1 parallel=false locality=false)
# one_call: every chunk in one call (the state pass inside the pipeline), C = 64, and C = 16 for short calls.
hybridlab_halide(hl_ssm_scan one_call ${cpu} PARAMS chunk=64 vec=8 parallel=true locality=true)
hybridlab_halide(hl_ssm_scan one_call_c16 ${cpu} PARAMS chunk=16 vec=8 parallel=true locality=true)
# tuned: one chunk of 16 per call (the wrapper walks the chunks, the state in place), every product on register tiles
# of tile_j x tile_r; the wrapper's chunk (halide.cpp kCpuScanChunk) is this build's `chunk`.
hybridlab_halide(hl_ssm_scan_chunk tuned ${cpu} PARAMS chunk=16 vec=8 tile_j=16 tile_r=4)
hybridlab_halide_sweep(hl_ssm_scan_chunk tuned ${cpu} PARAM tile_r LABEL r VALUES 2 6 PARAMS chunk=16 vec=8 tile_j=16)
# One token in the recurrent form (decode; one_call's and tuned's pick at T = 1): vectors along d_v, tasks over value heads.
hybridlab_halide(hl_ssm_scan_step tuned ${cpu} PARAMS vec=8 parallel=true)
if(HYBRIDLAB_HALIDE_VULKAN)
  hybridlab_halide(hl_ssm_scan gpu_plain ${vk} PARAMS chunk=64 gpu=true gpu_threads=64 gpu_shared=false gpu_tile_r=1)
  hybridlab_halide(hl_ssm_scan gpu_tuned ${vk} PARAMS chunk=64 gpu=true gpu_threads=64 gpu_shared=true gpu_tile_r=4)
endif()
