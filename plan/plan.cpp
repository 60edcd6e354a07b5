#include "plan/plan.h"

#include <algorithm>
#include <sstream>

#include "quant/error.h"

namespace hl::gpu {

namespace {

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// A variant of `op` named by `name` (an exact name or a family), or null if the op has none.
const Variant* lookup(const Registry& r, const std::string& op, const std::string& name) {
  for (auto* v : r.variants(op))
    if (v->name == name) return v;
  return r.family_default(op, name);
}

std::vector<std::pair<std::string, std::string>> entries(const std::string& spec) {
  std::vector<std::pair<std::string, std::string>> out;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = trim(item);
    if (item.empty()) continue;
    // Names end up in one-line error messages (unknown op 'x'): no line breaks or other control characters.
    if (std::any_of(item.begin(), item.end(), [](unsigned char c) { return (c < 32 && c != '\t') || c == 127; }))
      fail("--ops entry {} contains a control character", quant::printable(item));
    const auto eq = item.find('=');
    if (eq == std::string::npos) fail("--ops entry '{}' is not op=variant", item);
    out.emplace_back(trim(item.substr(0, eq)), trim(item.substr(eq + 1)));
  }
  return out;
}

}  // namespace

Plan::Plan() {
  for (auto& op : Registry::get().ops()) v_[op.name] = &Registry::get().variant(op.name, "reference");
}

bool Plan::needs_device(const std::string& spec) {
  const Registry& r = Registry::get();
  for (auto& [op, name] : entries(spec))
    for (auto& def : r.ops())
      if (op == "*" || op == def.name)
        if (auto* v = lookup(r, def.name, name); v && v->needs_device) return true;
  return false;
}

Plan Plan::parse(const std::string& spec, const Device* dev) {
  const Registry& r = Registry::get();
  Plan p;
  const auto pairs = entries(spec);
  // "" is the all-reference plan; text with no pair in it (",", " ") is a mistake, not that plan.
  if (pairs.empty() && !spec.empty()) fail("--ops {} names no op=variant pair", quant::printable(trim(spec)));
  for (auto& [op, name] : pairs) {
    if (op == "*") {
      bool any = false;
      for (auto& def : r.ops()) {
        const Variant* v = lookup(r, def.name, name);
        if (!v) continue;
        any = true;
        if (auto why = r.availability(*v, dev); !why.empty()) {
          p.notes_ += fmt::format("{}={} unavailable ({}): {} stays on {}\n", def.name, v->name, why, def.name,
                                  p.v_[def.name]->name);
          continue;
        }
        p.v_[def.name] = v;
      }
      if (!any) fail("--ops: no op has a variant or family '{}'", name);
      continue;
    }
    const Variant& v = r.variant(op, name);
    if (auto why = r.availability(v, dev); !why.empty())
      fail("--ops: variant '{}' of op '{}' is unavailable: {}", v.name, op, why);
    p.v_[op] = &v;
  }
  return p;
}

const Variant& Plan::variant(const std::string& op) const {
  auto it = v_.find(op);
  if (it == v_.end()) fail("plan: unknown op '{}'", op);
  return *it->second;
}

void Plan::set(const std::string& op, const Variant* v) {
  variant(op);
  v_[op] = v;
}

std::string Plan::describe() const {
  std::string s;
  for (auto& [op, v] : v_)
    if (v->family != "reference") s += (s.empty() ? "" : ",") + op + "=" + v->name;
  return s.empty() ? "all reference" : s;
}

bool Plan::uses_device() const {
  for (auto& [op, v] : v_)
    if (v->needs_device) return true;
  return false;
}

}  // namespace hl::gpu
