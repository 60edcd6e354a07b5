// The Vulkan runtime in one include, for kernels and tools.
#pragma once

#include "runtime/vulkan/buffer.h"
#include "runtime/vulkan/commands.h"
#include "runtime/vulkan/context.h"
#include "runtime/vulkan/device.h"
#include "runtime/vulkan/device_profile.h"
#include "runtime/vulkan/loader.h"
#include "runtime/vulkan/pipeline.h"
#include "runtime/vulkan/shaders.h"
