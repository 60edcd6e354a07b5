// `hybridlab ops` and `hybridlab devices`: what can run where.
#include <cstdio>

#include "ops/registry.h"
#include "tools/commands.h"

namespace hl::cli {

namespace {

void cmd_ops(const std::string& device, bool tunables) {
  std::unique_ptr<gpu::Device> dev;
  std::string why;
  try {
    dev = std::make_unique<gpu::Device>(vk::ContextOptions{.device = device});
    std::printf("device: %s (%s, profile %s)\n\n", dev->info().name.c_str(), dev->info().driver_info.c_str(),
                dev->profile().name().c_str());
  } catch (const std::exception& e) {
    if (!device.empty()) throw;
    why = e.what();
    std::printf("device: none (%s)\n\n", why.c_str());
  }
  const auto& r = gpu::Registry::get();
  // A tunable's value on the open device (its profile's override of the declared default), else the default.
  const auto value = [&](const gpu::Tunable& t) { return dev ? dev->tune(t.key) : t.value; };
  const auto list = [&](const std::vector<gpu::Tunable>& ts) {
    std::string s;
    for (auto& t : ts) s += fmt::format("{}{}={}", s.empty() ? "" : " ", t.key, value(t));
    return s;
  };
  std::printf("status: default = what '*=<family>' picks; baseline = kept to compare against; experimental\n\n");
  for (auto& op : r.ops()) {
    std::printf("%s: %s\n", op.name.c_str(), op.summary.c_str());
    if (tunables && !op.tunables.empty()) std::printf("  (op) tunables: %s\n", list(op.tunables).c_str());
    for (auto* v : r.variants(op.name)) {
      const std::string avail = r.availability(*v, dev.get());
      std::printf("  %-26s %-12s %-11s %s%s\n", v->name.c_str(), v->status.c_str(), avail.empty() ? "available" : "UNAVAILABLE",
                  v->summary.c_str(), avail.empty() ? "" : (" (" + avail + ")").c_str());
      if (tunables && !v->tunables.empty()) std::printf("  %-26s tunables: %s\n", "", list(v->tunables).c_str());
    }
  }
}

void cmd_devices() {
  const auto devs = vk::list_devices();
  for (auto& d : devs) std::printf("%u: %s\n%s\n", d.index, d.name.c_str(), d.summary().c_str());
  if (devs.empty()) fail("no Vulkan devices");
}

}  // namespace

void add_ops_commands(CLI::App& app) {
  auto* ops = app.add_subcommand("ops", "list the ops, their variants, and which run on the device");
  auto device = std::make_shared<std::string>();
  auto tunables = std::make_shared<bool>(false);
  ops->add_option("--device", *device, "Vulkan device: index or name substring");
  ops->add_flag("--tunables", *tunables, "also each variant's tunables, with their values on the device");
  ops->callback([device, tunables] { cmd_ops(*device, *tunables); });
  app.add_subcommand("devices", "list the Vulkan devices")->callback([] { cmd_devices(); });
}

}  // namespace hl::cli
