# gdn_prep: Halide schedules (ops/halide/CMakeLists.txt defines hybridlab_halide; GeneratorParams in halide_generator.cpp).
# CPU. plain: the algorithm as written (every stage inlined at its use, scalar, serial); tuned: the conv output and the
# heads' sums of squares stored once, 8 wide, tokens in parallel tasks. GPU. plain: a thread per value, blocks of 64;
# tuned (gpu_fused): no kernel between the conv and the outputs, 128 channels x 4 tokens per block.
hybridlab_halide(hl_gdn_prep plain ${cpu} PARAMS vec=1 t_per_task=0)
hybridlab_halide(hl_gdn_prep tuned ${cpu} PARAMS vec=8 t_per_task=16)
if(HYBRIDLAB_HALIDE_VULKAN)
  hybridlab_halide(hl_gdn_prep gpu_plain ${vk} PARAMS gpu=true gpu_threads=64 gpu_tile_t=1)
  hybridlab_halide(hl_gdn_prep gpu_tuned ${vk} PARAMS gpu=true gpu_threads=128 gpu_tile_t=4 gpu_fused=true)
  # gpu_tuned's tokens per block swept (hl_sweeps.h): halide-vulkan:gdn_prep:gpu_tuned_t<n>.
  # (8 tokens per block measured fastest at T >= 512 on the H200, 36.1 against 38.0 us at T = 512, but its q and k kernels
  # take 140-144 bytes of scalar arguments, past the 128 bytes of push constants that lavapipe and many devices give.)
  hybridlab_halide_sweep(hl_gdn_prep gpu_tuned ${vk} PARAM gpu_tile_t LABEL t VALUES 1 2 PARAMS gpu=true gpu_threads=128 gpu_fused=true)
endif()
