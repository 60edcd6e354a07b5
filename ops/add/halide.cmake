# add: Halide schedules (ops/halide/CMakeLists.txt defines hybridlab_halide; GeneratorParams in halide_generator.cpp).
# plain: the algorithm as written (scalar, serial); tuned: 8-wide, 4096 values per parallel task.
hybridlab_halide(hl_add plain ${cpu} PARAMS vec=1 per_task=0)
hybridlab_halide(hl_add tuned ${cpu} PARAMS vec=8 per_task=4096)
if(HYBRIDLAB_HALIDE_VULKAN)
  hybridlab_halide(hl_add gpu_plain ${vk} PARAMS gpu=true gpu_threads=64)
  hybridlab_halide(hl_add gpu_tuned ${vk} PARAMS gpu=true gpu_threads=256)
endif()
