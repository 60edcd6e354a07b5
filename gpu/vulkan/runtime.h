// The Vulkan runtime in one include, for kernels and tools.
#pragma once

#include "gpu/vulkan/buffer.h"
#include "gpu/vulkan/commands.h"
#include "gpu/vulkan/context.h"
#include "gpu/vulkan/device.h"
#include "gpu/vulkan/device_profile.h"
#include "gpu/vulkan/loader.h"
#include "gpu/vulkan/pipeline.h"
#include "gpu/vulkan/shaders.h"
