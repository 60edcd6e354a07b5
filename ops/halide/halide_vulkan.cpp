// Halide's Vulkan kernels as hybridlab dispatches (issue 24, route (a)). Halide's AOT code calls
// halide_vulkan_initialize_kernels once per pipeline call with its blob of SPIR-V modules, halide_vulkan_run per kernel
// and halide_vulkan_finalize_kernels at the end. The runtime's versions are weak; these replace them. With tunable
// halide.vulkan.own_dispatch = 1 (the default) each kernel becomes a hybridlab pipeline, made once per (module, entry
// point, specialization constants) and cached by Device::pipeline, and each run a Device::dispatch on hybridlab's
// stream: barriers by level, timestamps, the usage report see it as any hand-written kernel, and nothing is submitted
// or waited for per kernel. Halide's runtime keeps the buffer bookkeeping (its device allocations are hybridlab's pool,
// halide.cpp). With 0, or for a kernel hybridlab cannot take (a scalar argument that is not 32 bits wide, more scalars
// than the device's push constants, a buffer hybridlab did not make), Halide's runtime runs it as before: its own
// submission and wait, after Device::hand_over(). The runtime's definitions stay callable under the aliases that
// ops/halide/CMakeLists.txt adds to its object (hybridlab_halide_orig_vulkan_*).
#include "ops/halide/halide.h"

#ifdef HYBRIDLAB_HALIDE_VULKAN
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <set>

#include "HalideRuntime.h"
#include "HalideRuntimeVulkan.h"
#include "common.h"
#include "ops/halide/halide_vulkan.h"

// Halide 21's own definitions (the aliases of ops/halide/CMakeLists.txt).
extern "C" {
int hybridlab_halide_orig_vulkan_initialize_kernels(void* user_context, void** state_ptr, const char* src, int size);
int hybridlab_halide_orig_vulkan_run(void* user_context, void* state_ptr, const char* entry_name, int blocksX,
                                     int blocksY, int blocksZ, int threadsX, int threadsY, int threadsZ,
                                     int shared_mem_bytes, size_t arg_sizes[], void* args[], int8_t arg_is_buffer[]);
void hybridlab_halide_orig_vulkan_finalize_kernels(void* user_context, void* state_ptr);
int hybridlab_halide_orig_vulkan_copy_to_host(void* user_context, halide_buffer_t* buf);
int hybridlab_halide_orig_vulkan_copy_to_device(void* user_context, halide_buffer_t* buf);
int hybridlab_halide_orig_vulkan_buffer_copy(void* user_context, halide_buffer_t* src,
                                             const halide_device_interface_t* dst_device_interface,
                                             halide_buffer_t* dst);
int hybridlab_halide_orig_vulkan_device_sync(void* user_context, halide_buffer_t* buf);
}

namespace hl::gpu::halide_vk {

State& state() {
  static State* s = new State;  // never destroyed: a device's teardown at exit may still reset it
  return *s;
}

BufferPtr buffer_of(uint64_t device_field) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  const auto it = s.regions.find(reinterpret_cast<const void*>(uintptr_t(device_field)));
  return it == s.regions.end() ? nullptr : it->second->buf;
}

void add_region(const Wrapped& w) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.regions[&w.region] = &w;
}

void remove_region(const Wrapped& w) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.regions.erase(&w.region);
}

namespace {
thread_local const Call* current = nullptr;
}  // namespace

CallScope::CallScope(Device& d, std::string what, bool own) : saved_(current), call_{&d, std::move(what), own} {
  current = &call_;
}
CallScope::~CallScope() { current = saved_; }
const Call* current_call() { return current; }

bool own_dispatch(const Device& d) { return d.tune("halide.vulkan.own_dispatch") != 0; }

// ---- the blob ----

namespace {

constexpr uint32_t kMagic = 0x07230203u;

// Reads words of a bounded range; a read past its end is an Error naming what was being read.
struct Words {
  const uint32_t* w;
  size_t n, at = 0;
  uint32_t next(const char* what) {
    if (at >= n) fail("halide-vulkan: a kernel blob ends inside {}", what);
    return w[at++];
  }
  std::string text(const char* what) {  // a word count, then that many words of NUL-padded text
    const uint32_t len = next(what);
    if (len > n - at) fail("halide-vulkan: a kernel blob's {} runs past its end", what);
    const char* c = reinterpret_cast<const char*>(w + at);
    at += len;
    return std::string(c, strnlen(c, size_t(len) * 4));
  }
};

void decode_module(const uint32_t* m, size_t words, std::vector<KernelInfo>& out) {
  Words r{m, words};
  const uint32_t header = r.next("a module header"), count = r.next("a module header");
  if (header < 2 || header >= words) fail("halide-vulkan: a kernel module header of {} words in {}", header, words);
  r.n = header;  // the metadata ends where the SPIR-V starts
  const std::span<const uint32_t> spirv(m + header, words - header);
  if (spirv.size() < 5 || spirv[0] != kMagic) fail("halide-vulkan: a kernel module holds no SPIR-V after its header");
  for (uint32_t e = 0; e < count; ++e) {
    KernelInfo k;
    k.entry = r.text("an entry point name");
    k.entry_index = e;
    k.uniform_buffers = r.next("a descriptor set");
    k.storage_buffers = r.next("a descriptor set");
    const uint32_t specs = r.next("a descriptor set");
    for (uint32_t s = 0; s < specs; ++s) {
      r.text("a specialization constant's name");
      k.spec_ids.push_back(r.next("a specialization constant"));
      r.next("a specialization constant");  // its size: every one Halide binds is 32 bits
    }
    const uint32_t shared = r.next("a descriptor set");
    for (uint32_t s = 0; s < shared; ++s) {
      r.text("a shared allocation's name");
      KernelInfo::Shared a{};
      a.constant_id = r.next("a shared allocation");
      a.type_size = r.next("a shared allocation");
      a.array_size = r.next("a shared allocation");
      if (a.constant_id && a.type_size == 0) fail("halide-vulkan: kernel {} declares shared memory of 0-byte elements", k.entry);
      k.shared.push_back(a);
    }
    for (uint32_t& id : k.local_size_ids) id = r.next("a descriptor set's workgroup size");
    if (k.uniform_buffers > 1) fail("halide-vulkan: kernel {} declares {} uniform buffers (Halide packs scalars in one)", k.entry, k.uniform_buffers);
    k.spirv = spirv;
    out.push_back(std::move(k));
  }
}

}  // namespace

std::vector<KernelInfo> decode_blob(const char* src, int size) {
  if (!src || size < 4 || size % 4 || uintptr_t(src) % 4) fail("halide-vulkan: a kernel blob of {} bytes", size);
  Words r{reinterpret_cast<const uint32_t*>(src), size_t(size) / 4};
  const uint32_t count = r.next("its header");
  std::vector<uint32_t> bytes;
  for (uint32_t i = 0; i < count; ++i) {
    bytes.push_back(r.next("its header"));
    r.text("a kernel name");
  }
  std::vector<KernelInfo> out;
  size_t at = r.at;
  for (uint32_t b : bytes) {
    if (b % 4 || b / 4 > r.n - at) fail("halide-vulkan: a kernel module of {} bytes does not fit its blob", b);
    decode_module(r.w + at, b / 4, out);
    at += b / 4;
  }
  return out;
}

// ---- the SPIR-V rewrite ----

namespace {

enum : uint32_t {
  OpName = 5, OpTypeInt = 21, OpTypeFloat = 22, OpTypeStruct = 30, OpTypePointer = 32, OpFunction = 54,
  OpFunctionParameter = 55, OpVariable = 59, OpLoad = 61, OpStore = 62, OpCopyMemory = 63, OpCopyMemorySized = 64,
  OpAccessChain = 65, OpInBoundsAccessChain = 66, OpPtrAccessChain = 67, OpArrayLength = 68,
  OpInBoundsPtrAccessChain = 70, OpDecorate = 71, OpMemberDecorate = 72, OpDecorationGroup = 73, OpGroupDecorate = 74,
  OpGroupMemberDecorate = 75, OpCopyObject = 83, OpAtomicLoad = 227, OpDecorateId = 332, OpDecorateString = 5632,
  OpMemberDecorateString = 5633,
};
enum : uint32_t { Block = 2, BufferBlock = 3, NonWritable = 24, Binding = 33, DescriptorSet = 34 };
enum : uint32_t { Uniform = 2, PushConstant = 9, StorageBuffer = 12 };

bool is_access_chain(uint32_t op) {
  return op == OpAccessChain || op == OpInBoundsAccessChain || op == OpPtrAccessChain || op == OpInBoundsPtrAccessChain;
}
bool is_annotation(uint32_t op) {
  return (op >= OpDecorate && op <= OpGroupMemberDecorate) || op == OpDecorateId || op == OpDecorateString ||
         op == OpMemberDecorateString;
}

}  // namespace

std::vector<uint32_t> patch_spirv(const KernelInfo& k) {
  const std::span<const uint32_t> in = k.spirv;
  if (in.size() < 5 || in[0] != kMagic) fail("halide-vulkan: kernel {} is not a SPIR-V module", k.entry);
  struct Inst {
    size_t at;
    uint32_t op, n;
  };
  std::vector<Inst> code;
  size_t first_function = SIZE_MAX, last_annotation = SIZE_MAX;
  for (size_t i = 5; i < in.size();) {
    const uint32_t op = in[i] & 0xFFFFu, n = in[i] >> 16;
    if (n == 0 || i + n > in.size()) fail("halide-vulkan: kernel {}: malformed SPIR-V at word {}", k.entry, i);
    if (op == OpFunction && first_function == SIZE_MAX) first_function = code.size();
    if (is_annotation(op)) last_annotation = code.size();
    if (op == OpGroupDecorate || op == OpGroupMemberDecorate)
      fail("halide-vulkan: kernel {} uses decoration groups (not rewritten)", k.entry);
    code.push_back({i, op, n});
    i += n;
  }
  if (first_function == SIZE_MAX || last_annotation == SIZE_MAX || last_annotation > first_function)
    fail("halide-vulkan: kernel {}: no functions or decorations where a module has them", k.entry);
  const auto word = [&](const Inst& x, uint32_t i) { return i < x.n ? in[x.at + i] : 0u; };

  // What the module declares.
  std::map<uint32_t, uint32_t> set_of, binding_of, ptr_sc, ptr_pointee, var_type, var_sc, int_width, float_width;
  std::set<uint32_t> block, buffer_block;
  std::map<uint32_t, std::vector<uint32_t>> members;
  for (const Inst& x : code) {
    if (x.op == OpDecorate && x.n >= 3) {
      const uint32_t target = word(x, 1), deco = word(x, 2);
      if (deco == Block) block.insert(target);
      if (deco == BufferBlock) buffer_block.insert(target);
      if (deco == DescriptorSet && x.n >= 4) set_of[target] = word(x, 3);
      if (deco == Binding && x.n >= 4) binding_of[target] = word(x, 3);
    } else if (x.op == OpTypePointer && x.n == 4) {
      ptr_sc[word(x, 1)] = word(x, 2);
      ptr_pointee[word(x, 1)] = word(x, 3);
    } else if (x.op == OpVariable && x.n >= 4) {
      var_type[word(x, 2)] = word(x, 1);
      var_sc[word(x, 2)] = word(x, 3);
    } else if (x.op == OpTypeStruct && x.n >= 2) {
      for (uint32_t i = 2; i < x.n; ++i) members[word(x, 1)].push_back(word(x, i));
    } else if (x.op == OpTypeInt && x.n >= 3) {
      int_width[word(x, 1)] = word(x, 2);
    } else if (x.op == OpTypeFloat && x.n >= 3) {
      float_width[word(x, 1)] = word(x, 2);
    }
  }
  const auto pointee = [&](uint32_t var) {
    const auto t = var_type.find(var);
    return t == var_type.end() || !ptr_pointee.count(t->second) ? 0u : ptr_pointee[t->second];
  };
  const auto in_set = [&](uint32_t var) { return set_of.count(var) && set_of[var] == k.entry_index; };

  // The kernel's scalar-argument block and its buffers.
  uint32_t args = 0;
  std::vector<uint32_t> buffers;
  for (auto [var, sc] : var_sc) {
    if (!in_set(var)) continue;
    const uint32_t s = pointee(var);
    if (sc == Uniform && block.count(s)) {
      if (args) fail("halide-vulkan: kernel {} has two uniform blocks", k.entry);
      args = var;
    } else if ((sc == Uniform && buffer_block.count(s)) || (sc == StorageBuffer && block.count(s))) {
      buffers.push_back(var);
    }
  }
  if ((args != 0) != (k.uniform_buffers != 0) || buffers.size() != k.storage_buffers)
    fail("halide-vulkan: kernel {}: its module declares {} uniform and {} storage buffers, its header {} and {}", k.entry,
         args != 0, buffers.size(), k.uniform_buffers, k.storage_buffers);
  const uint32_t shift = args ? 1 : 0;
  std::vector<bool> bound(buffers.size(), false);
  for (uint32_t v : buffers) {
    const uint32_t b = binding_of.count(v) ? binding_of[v] : UINT32_MAX;
    if (b < shift || b - shift >= buffers.size() || bound[b - shift])
      fail("halide-vulkan: kernel {}: buffer bindings are not {}..{}", k.entry, shift, shift + buffers.size() - 1);
    bound[b - shift] = true;
  }
  if (args) {
    if (binding_of[args] != 0) fail("halide-vulkan: kernel {}: its scalar block is not at binding 0", k.entry);
    for (uint32_t m : members[pointee(args)])
      if ((int_width.count(m) ? int_width[m] : float_width.count(m) ? float_width[m] : 0) != 32)
        fail("halide-vulkan: kernel {} takes a scalar argument that is not a 32-bit int or float (a bool?): a "
             "push-constant block cannot hold it", k.entry);
    const uint32_t type = var_type[args];
    for (const Inst& x : code)
      if ((x.op == OpVariable && word(x, 1) == type && word(x, 2) != args) || (x.op == OpFunctionParameter && word(x, 1) == type))
        fail("halide-vulkan: kernel {}: its scalar block's pointer type has other uses", k.entry);
  }

  // The pointers derived from a variable (access chains and copies of them, in the functions).
  const auto derived = [&](uint32_t var) {
    std::set<uint32_t> ids{var};
    for (int pass = 0; pass < 2; ++pass)
      for (size_t i = first_function; i < code.size(); ++i) {
        const Inst& x = code[i];
        if ((is_access_chain(x.op) || x.op == OpCopyObject) && x.n >= 4 && ids.count(word(x, 3))) ids.insert(word(x, 2));
      }
    return ids;
  };
  // Whether anything may store through a pointer derived from var: OpStore or a memory copy into it, or any other
  // use than a load, an access chain or a length (atomics, calls: conservatively written).
  const auto written = [&](uint32_t var) {
    const std::set<uint32_t> ids = derived(var);
    for (size_t i = first_function; i < code.size(); ++i) {
      const Inst& x = code[i];
      if (x.op == OpLoad || x.op == OpAtomicLoad || x.op == OpArrayLength || x.op == OpCopyObject || is_access_chain(x.op))
        continue;
      if (x.op == OpStore || x.op == OpCopyMemory || x.op == OpCopyMemorySized) {
        if (ids.count(word(x, 1))) return true;
        continue;
      }
      for (uint32_t j = 1; j < x.n; ++j)
        if (ids.count(word(x, j))) return true;
    }
    return false;
  };
  std::vector<uint32_t> readonly;
  for (uint32_t v : buffers)
    if (!written(v)) readonly.push_back(v);

  // New PushConstant pointer types for the access chains into the scalar block, one per pointee.
  uint32_t next_id = in[3];
  std::set<uint32_t> from_args;
  std::map<uint32_t, uint32_t> pc_pointer;  // Uniform pointer type -> its PushConstant twin
  if (args) {
    from_args = derived(args);
    for (size_t i = first_function; i < code.size(); ++i) {
      const Inst& x = code[i];
      if (is_access_chain(x.op) && x.n >= 4 && from_args.count(word(x, 3)) && !pc_pointer.count(word(x, 1)))
        pc_pointer[word(x, 1)] = next_id++;
    }
    for (auto [t, twin] : pc_pointer)
      if (!ptr_sc.count(t)) fail("halide-vulkan: kernel {}: an access chain's type is not a pointer", k.entry);
  }

  std::vector<uint32_t> out(in.begin(), in.begin() + 5);
  out.reserve(in.size() + 4 * pc_pointer.size() + 3 * readonly.size());
  for (size_t i = 0; i < code.size(); ++i) {
    const Inst& x = code[i];
    std::vector<uint32_t> ins(in.begin() + long(x.at), in.begin() + long(x.at + x.n));
    if (x.op == OpDecorate && x.n >= 4) {
      const uint32_t target = ins[1], deco = ins[2];
      if (args && target == args && (deco == Binding || deco == DescriptorSet)) continue;  // a push constant has neither
      if (deco == DescriptorSet) ins[3] = ins[3] == k.entry_index ? 0 : ins[3] == 0 ? k.entry_index : ins[3];
      if (deco == Binding && shift && in_set(target)) ins[3] -= shift;
    } else if (args && x.op == OpTypePointer && ins[1] == var_type[args]) {
      ins[2] = PushConstant;
    } else if (args && x.op == OpVariable && ins[2] == args) {
      ins[3] = PushConstant;
    } else if (args && is_access_chain(x.op) && from_args.count(ins[3])) {
      ins[1] = pc_pointer.at(ins[1]);
    }
    out.insert(out.end(), ins.begin(), ins.end());
    if (x.op == OpTypePointer && pc_pointer.count(ins[1]))
      out.insert(out.end(), {(4u << 16) | OpTypePointer, pc_pointer[ins[1]], PushConstant, ins[3]});
    if (i == last_annotation)
      for (uint32_t v : readonly) out.insert(out.end(), {(3u << 16) | OpDecorate, v, NonWritable});
  }
  out[3] = next_id;
  return out;
}

// ---- the overrides ----

namespace {

std::atomic<uint64_t> n_dispatched{0}, n_runtime_kernels{0}, n_runtime_transfers{0};

// One pipeline's blob (what its AOT code keeps in its module state), decoded once.
struct Module {
  const char* src = nullptr;
  int size = 0;
  std::string name;   // its kernels' hybridlab pipelines are "<name>:<entry>"
  std::string error;  // why the blob could not be decoded (its kernels then cannot run on hybridlab's stream)
  struct Kernel {
    KernelInfo info;
    std::vector<uint32_t> spirv;  // patch_spirv's
    std::string why_not;          // why it cannot be dispatched by hybridlab (Halide's runtime runs it)
    std::string pipeline;
  };
  std::vector<Kernel> kernels;
  void* halide_state = nullptr;  // Halide's compilation-cache state, for its own path
  bool halide_held = false;      // Halide's initialize_kernels ran for the call in flight (its finalize owed)
};

struct Modules {
  std::mutex mu;
  std::vector<std::unique_ptr<Module>> all;  // never freed: the AOT code keeps pointers to them in static state
  std::set<std::string> names;
};
Modules& modules() {
  static Modules* m = new Modules;
  return *m;
}

Module* make_module(const char* src, int size) {
  auto m = std::make_unique<Module>();
  m->src = src;
  m->size = size;
  Modules& ms = modules();
  std::lock_guard<std::mutex> lock(ms.mu);
  const Call* c = current_call();
  const std::string base = c && !c->what.empty() ? c->what : "halide";
  m->name = base;
  for (int i = 2; ms.names.count(m->name); ++i) m->name = fmt::format("{}#{}", base, i);
  ms.names.insert(m->name);
  try {
    for (KernelInfo& k : decode_blob(src, size)) {
      Module::Kernel& mk = m->kernels.emplace_back();
      mk.info = std::move(k);
      mk.pipeline = m->name + ":" + mk.info.entry;
      try {
        mk.spirv = patch_spirv(mk.info);
      } catch (const std::exception& e) {
        mk.why_not = e.what();
      }
    }
  } catch (const std::exception& e) {
    m->error = e.what();
  }
  ms.all.push_back(std::move(m));
  return ms.all.back().get();
}

// Dispatches kernel k on d's stream; "" when it did, else why hybridlab cannot take it (Halide's runtime then runs it).
// Error on arguments that contradict the kernel's metadata.
std::string dispatch(Device& d, const Module::Kernel& k, int bx, int by, int bz, int tx, int ty, int tz, int shmem,
                     const size_t arg_sizes[], void* args[], const int8_t arg_is_buffer[]) {
  if (!k.why_not.empty()) return k.why_not;
  const KernelInfo& ki = k.info;
  std::vector<BufferPtr> buffers;
  std::vector<uint8_t> push;
  for (size_t i = 0; arg_sizes[i] > 0; ++i) {
    if (arg_is_buffer[i]) {
      const auto* hb = static_cast<const halide_buffer_t*>(args[i]);
      if (!hb || !hb->device) fail("halide-vulkan: kernel {}: buffer argument {} has no device allocation", ki.entry, i);
      BufferPtr b = buffer_of(hb->device);
      if (!b) return fmt::format("buffer argument {} is not one of hybridlab's buffers", i);
      buffers.push_back(std::move(b));
    } else {
      if (arg_sizes[i] != 4) return fmt::format("scalar argument {} is {} bytes", i, arg_sizes[i]);
      const auto* p = static_cast<const uint8_t*>(args[i]);
      push.insert(push.end(), p, p + 4);
    }
  }
  if (buffers.size() != ki.storage_buffers || push.empty() != (ki.uniform_buffers == 0))
    fail("halide-vulkan: kernel {} was handed {} buffers and {} scalar bytes; its module takes {} buffers{}", ki.entry,
         buffers.size(), push.size(), ki.storage_buffers, ki.uniform_buffers ? " and scalars" : ", no scalars");
  const vk::DeviceInfo& info = d.info();
  if (push.size() > info.max_push_constants)
    return fmt::format("{} bytes of scalar arguments, past the {} bytes of push constants of {}", push.size(),
                       info.max_push_constants, info.name);

  // Specialization constants as Halide's runtime sets them (vk_setup_compute_pipeline at v21.0.0): the workgroup size
  // where the module leaves it open, the one dynamically sized shared array from the call's shared-memory bytes.
  const int threads[3] = {tx, ty, tz}, groups[3] = {bx, by, bz};
  int64_t invocations = 1;
  for (int i = 0; i < 3; ++i) {
    if (threads[i] < 1 || uint32_t(threads[i]) > info.max_workgroup_size[i] || groups[i] < 0 ||
        uint32_t(groups[i]) > info.max_workgroup_count[i])
      fail("halide-vulkan: kernel {}: blocks {}x{}x{} of threads {}x{}x{} exceed what {} runs", ki.entry, bx, by, bz,
           tx, ty, tz, info.name);
    invocations *= threads[i];
  }
  if (invocations > int64_t(info.max_workgroup_invocations))
    fail("halide-vulkan: kernel {}: {} threads per block, {} runs at most {}", ki.entry, invocations, info.name,
         info.max_workgroup_invocations);
  std::vector<vk::SpecConstant> spec;
  const auto bind = [&](uint32_t id, uint32_t value) {
    if (std::find(ki.spec_ids.begin(), ki.spec_ids.end(), id) == ki.spec_ids.end())
      fail("halide-vulkan: kernel {} has no specialization constant {}", ki.entry, id);
    spec.push_back({id, value});
  };
  if (!ki.shared.empty() && shmem > 0) {
    if (uint32_t(shmem) > info.max_shared_memory)
      fail("halide-vulkan: kernel {} asks for {} bytes of shared memory, {} has {}", ki.entry, shmem, info.name,
           info.max_shared_memory);
    uint64_t fixed = 0;
    const KernelInfo::Shared* dynamic = nullptr;
    for (const KernelInfo::Shared& s : ki.shared) {
      if (s.constant_id == 0) fixed += uint64_t(s.type_size) * s.array_size;
      else if (dynamic) fail("halide-vulkan: kernel {} has two dynamically sized shared arrays", ki.entry);
      else dynamic = &s;
    }
    if (dynamic && uint64_t(shmem) > fixed) bind(dynamic->constant_id, uint32_t((uint64_t(shmem) - fixed) / dynamic->type_size));
  }
  if (ki.local_size_ids[0] != 0)
    for (int i = 0; i < 3; ++i) bind(ki.local_size_ids[i], uint32_t(threads[i]));

  push.resize((push.size() + 3) / 4 * 4);
  const vk::Pipeline& p = d.pipeline(k.pipeline, k.spirv, ki.entry, spec, uint32_t(buffers.size()), uint32_t(push.size()));
  d.dispatch(p, buffers, push.data(), uint32_t(push.size()), uint32_t(bx), uint32_t(by), uint32_t(bz));
  return "";
}

// Halide's runtime doing work of its own on the queue inside a call whose kernels are on hybridlab's stream (a host
// copy of a stage Halide computes on the CPU): what hybridlab recorded is submitted first and what it records after
// sees the result, as for the whole call on Halide's path.
template <class F> int on_runtime(void* user_context, F&& f) {
  ++n_runtime_transfers;
  const Call* c = current_call();
  if (!c || !c->own) return f();  // Halide's path: Io::run brackets the whole call
  try {
    c->dev->hand_over();
  } catch (const std::exception& e) {
    halide_error(user_context, e.what());
    return halide_error_code_generic_error;
  }
  const int rc = f();
  c->dev->take_back();
  return rc;
}

}  // namespace
}  // namespace hl::gpu::halide_vk

using hl::gpu::halide_vk::current_call;
using hl::gpu::halide_vk::Module;

extern "C" int halide_vulkan_initialize_kernels(void* user_context, void** state_ptr, const char* src, int size) {
  if (!state_ptr) {
    halide_error(user_context, "halide_vulkan_initialize_kernels: no module state");
    return halide_error_code_generic_error;
  }
  auto* m = static_cast<Module*>(*state_ptr);
  if (!m) *state_ptr = m = hl::gpu::halide_vk::make_module(src, size);
  const hl::gpu::halide_vk::Call* c = current_call();
  if (c && c->own) {
    if (!m->error.empty()) {
      halide_error(user_context, m->error.c_str());
      return halide_error_code_generic_error;
    }
    return halide_error_code_success;
  }
  m->halide_held = true;
  return hybridlab_halide_orig_vulkan_initialize_kernels(user_context, &m->halide_state, src, size);
}

extern "C" int halide_vulkan_run(void* user_context, void* state_ptr, const char* entry_name, int blocksX, int blocksY,
                                 int blocksZ, int threadsX, int threadsY, int threadsZ, int shared_mem_bytes,
                                 size_t arg_sizes[], void* args[], int8_t arg_is_buffer[]) {
  namespace H = hl::gpu::halide_vk;
  auto* m = static_cast<Module*>(state_ptr);
  if (!m || !entry_name) {
    halide_error(user_context, "halide_vulkan_run: no module state or entry point");
    return halide_error_code_generic_error;
  }
  const H::Call* c = current_call();
  try {
    if (c && c->own) {
      const Module::Kernel* k = nullptr;
      for (const Module::Kernel& x : m->kernels)
        if (x.info.entry == entry_name) k = &x;
      if (!k) hl::fail("halide-vulkan: pipeline {} has no kernel {}", m->name, entry_name);
      if (H::dispatch(*c->dev, *k, blocksX, blocksY, blocksZ, threadsX, threadsY, threadsZ, shared_mem_bytes, arg_sizes,
                      args, arg_is_buffer)
              .empty()) {
        ++H::n_dispatched;
        return halide_error_code_success;
      }
    }
    if (!m->halide_held) {  // a kernel hybridlab cannot take, in a call whose others it dispatched
      if (const int rc = hybridlab_halide_orig_vulkan_initialize_kernels(user_context, &m->halide_state, m->src, m->size))
        return rc;
      m->halide_held = true;
    }
    ++H::n_runtime_kernels;
    if (!c || !c->own)
      return hybridlab_halide_orig_vulkan_run(user_context, m->halide_state, entry_name, blocksX, blocksY, blocksZ,
                                              threadsX, threadsY, threadsZ, shared_mem_bytes, arg_sizes, args,
                                              arg_is_buffer);
    c->dev->hand_over();
    const int rc = hybridlab_halide_orig_vulkan_run(user_context, m->halide_state, entry_name, blocksX, blocksY, blocksZ,
                                                    threadsX, threadsY, threadsZ, shared_mem_bytes, arg_sizes, args,
                                                    arg_is_buffer);
    c->dev->take_back();
    return rc;
  } catch (const std::exception& e) {
    halide_error(user_context, e.what());
    return halide_error_code_generic_error;
  }
}

extern "C" void halide_vulkan_finalize_kernels(void* user_context, void* state_ptr) {
  auto* m = static_cast<Module*>(state_ptr);
  if (!m || !m->halide_held) return;
  m->halide_held = false;
  hybridlab_halide_orig_vulkan_finalize_kernels(user_context, m->halide_state);
}

extern "C" int halide_vulkan_copy_to_host(void* user_context, halide_buffer_t* buf) {
  return hl::gpu::halide_vk::on_runtime(user_context, [&] { return hybridlab_halide_orig_vulkan_copy_to_host(user_context, buf); });
}

extern "C" int halide_vulkan_copy_to_device(void* user_context, halide_buffer_t* buf) {
  return hl::gpu::halide_vk::on_runtime(user_context, [&] { return hybridlab_halide_orig_vulkan_copy_to_device(user_context, buf); });
}

extern "C" int halide_vulkan_buffer_copy(void* user_context, halide_buffer_t* src,
                                         const halide_device_interface_t* dst_device_interface, halide_buffer_t* dst) {
  return hl::gpu::halide_vk::on_runtime(
      user_context, [&] { return hybridlab_halide_orig_vulkan_buffer_copy(user_context, src, dst_device_interface, dst); });
}

extern "C" int halide_vulkan_device_sync(void* user_context, halide_buffer_t* buf) {
  return hl::gpu::halide_vk::on_runtime(user_context, [&] { return hybridlab_halide_orig_vulkan_device_sync(user_context, buf); });
}
#endif

namespace hl::gpu::halide {

VulkanCounts vulkan_counts() {
  VulkanCounts v;
#ifdef HYBRIDLAB_HALIDE_VULKAN
  v.dispatched = halide_vk::n_dispatched;
  v.runtime_kernels = halide_vk::n_runtime_kernels;
  v.runtime_transfers = halide_vk::n_runtime_transfers;
#endif
  return v;
}

std::vector<VulkanKernel> vulkan_kernels() {
  std::vector<VulkanKernel> out;
#ifdef HYBRIDLAB_HALIDE_VULKAN
  auto& ms = halide_vk::modules();
  std::lock_guard<std::mutex> lock(ms.mu);
  for (const auto& m : ms.all)
    for (const auto& k : m->kernels)
      out.push_back({k.pipeline, std::vector<uint32_t>(k.info.spirv.begin(), k.info.spirv.end()), k.spirv, k.why_not});
#endif
  return out;
}

}  // namespace hl::gpu::halide
