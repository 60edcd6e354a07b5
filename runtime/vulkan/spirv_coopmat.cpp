// See spirv_coopmat.h. The module is handled as a list of instructions; only the few opcodes the patch
// reads or writes are interpreted (their layouts from the SPIR-V specification), everything else is
// carried over word for word.
#include "runtime/vulkan/spirv_coopmat.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace hl::vk::spirv {
namespace {

constexpr uint32_t kMagic = 0x07230203;
constexpr uint16_t OpExtension = 10, OpCapability = 17, OpTypeInt = 21, OpTypeFloat = 22, OpConstant = 43;
constexpr uint32_t kCapabilityFloat16 = 9, kScopeSubgroup = 3;
constexpr const char* kExtension = "SPV_KHR_cooperative_matrix";

using Inst = std::vector<uint32_t>;  // one instruction, its first word (count << 16 | opcode) included

uint16_t opcode(const Inst& i) { return uint16_t(i[0] & 0xFFFF); }
Inst make(uint16_t op, std::vector<uint32_t> operands) {
  operands.insert(operands.begin(), (uint32_t(operands.size() + 1) << 16) | op);
  return operands;
}

// A null-terminated string packed into words, little end first (SPIR-V literal strings).
std::vector<uint32_t> string_words(std::string_view s) {
  std::vector<uint32_t> w(s.size() / 4 + 1, 0);
  for (size_t i = 0; i < s.size(); ++i) w[i / 4] |= uint32_t(uint8_t(s[i])) << (8 * (i % 4));
  return w;
}

struct Module {
  std::vector<uint32_t> header;
  std::vector<Inst> insts;

  explicit Module(std::span<const uint32_t> words) {
    if (words.size() < 5 || words[0] != kMagic) throw std::runtime_error("not a SPIR-V module (magic number)");
    header.assign(words.begin(), words.begin() + 5);
    for (size_t i = 5; i < words.size();) {
      const uint32_t n = words[i] >> 16;
      if (n == 0 || i + n > words.size())
        throw std::runtime_error(fmt::format("malformed SPIR-V: instruction at word {} has word count {}", i, n));
      insts.emplace_back(words.begin() + i, words.begin() + i + n);
      i += n;
    }
  }
  uint32_t& bound() { return header[3]; }
  std::vector<uint32_t> words() const {
    std::vector<uint32_t> w = header;
    for (const auto& i : insts) w.insert(w.end(), i.begin(), i.end());
    return w;
  }

  // Index of the first instruction that `match` accepts, if any.
  template <class F>
  std::optional<size_t> find(F match) const {
    for (size_t i = 0; i < insts.size(); ++i)
      if (match(insts[i])) return i;
    return std::nullopt;
  }
  // The instruction defining `id` among types and constants (result id in word 1 for types, 2 for
  // constants), if any.
  std::optional<size_t> definition(uint32_t id) const {
    return find([&](const Inst& i) {
      const uint16_t op = opcode(i);
      return ((op == OpTypeInt || op == OpTypeFloat || op == kOpTypeCooperativeMatrixKHR) && i.size() > 1 && i[1] == id) ||
             ((op == OpConstant || op == 50 /* OpSpecConstant */) && i.size() > 2 && i[2] == id);
    });
  }

  // The id of the instruction `match` accepts, declared before index `pos` (moved there if it comes later:
  // only plain types and constants of a type already before `pos` are looked up, so moving one up is
  // safe), or else `fresh` (given its new id) inserted at pos. pos is advanced past what was placed.
  template <class F>
  uint32_t ensure_before(size_t& pos, F match, Inst fresh, size_t id_word) {
    if (auto j = find(match)) {
      const uint32_t id = insts[*j][id_word];
      if (*j > pos) {
        Inst moved = std::move(insts[*j]);
        insts.erase(insts.begin() + std::ptrdiff_t(*j));
        insts.insert(insts.begin() + std::ptrdiff_t(pos++), std::move(moved));
      }
      return id;
    }
    fresh[id_word] = bound()++;
    const uint32_t id = fresh[id_word];
    insts.insert(insts.begin() + std::ptrdiff_t(pos++), std::move(fresh));
    return id;
  }
  uint32_t float_type(size_t& pos, uint32_t width) {
    return ensure_before(
        pos, [&](const Inst& i) { return opcode(i) == OpTypeFloat && i.size() == 3 && i[2] == width; },
        make(OpTypeFloat, {0, width}), 1);
  }
  uint32_t uint_type(size_t& pos) {
    return ensure_before(
        pos, [](const Inst& i) { return opcode(i) == OpTypeInt && i.size() == 4 && i[2] == 32 && i[3] == 0; },
        make(OpTypeInt, {0, 32, 0}), 1);
  }
  uint32_t uint_constant(size_t& pos, uint32_t value) {
    const uint32_t type = uint_type(pos);
    return ensure_before(
        pos, [&](const Inst& i) { return opcode(i) == OpConstant && i.size() == 4 && i[1] == type && i[3] == value; },
        make(OpConstant, {type, 0, value}), 2);
  }

  bool has_capability(uint32_t cap) const {
    return find([&](const Inst& i) { return opcode(i) == OpCapability && i.size() == 2 && i[1] == cap; }).has_value();
  }
  bool has_extension(std::string_view name) const {
    const auto want = string_words(name);
    return find([&](const Inst& i) {
             return opcode(i) == OpExtension && std::equal(i.begin() + 1, i.end(), want.begin(), want.end());
           }).has_value();
  }
  // After the last instruction of opcode `after` (or of `fallback`, or at the start).
  void insert_after_last(uint16_t after, uint16_t fallback, Inst inst) {
    size_t at = 0;
    for (size_t i = 0; i < insts.size(); ++i)
      if (opcode(insts[i]) == after || opcode(insts[i]) == fallback) at = i + 1;
    insts.insert(insts.begin() + std::ptrdiff_t(at), std::move(inst));
  }
};

// 16 or 32 for a marker value, else 0.
uint32_t marker_width(uint32_t v) { return v == kMarkerF16 ? 16 : v == kMarkerF32 ? 32 : 0; }

}  // namespace

std::vector<uint32_t> patch_cooperative_matrix(std::span<const uint32_t> words) {
  Module m(words);
  const uint32_t original_bound = m.bound();
  bool any = false, f16 = false;
  for (size_t i = 0; i < m.insts.size(); ++i) {
    if (opcode(m.insts[i]) != kOpTypeCooperativeMatrixKHR) continue;
    if (m.insts[i].size() != 7)
      throw std::runtime_error(fmt::format("OpTypeCooperativeMatrixKHR with {} words, not 7", m.insts[i].size()));
    any = true;
    const uint32_t comp = m.insts[i][2];
    if (uint32_t width = marker_width(comp); width && comp >= original_bound) {
      // Literal form: every operand after the result id is a value, not an id.
      const uint32_t scope = m.insts[i][3], rows = m.insts[i][4], cols = m.insts[i][5], use = m.insts[i][6];
      if (use > 2 || rows == 0 || cols == 0)
        throw std::runtime_error(fmt::format("cooperative matrix type {}: rows {}, cols {}, use {}", m.insts[i][1], rows,
                                             cols, use));
      size_t pos = i;
      const uint32_t type = m.float_type(pos, width);
      const uint32_t ids[4] = {m.uint_constant(pos, scope), m.uint_constant(pos, rows), m.uint_constant(pos, cols),
                               m.uint_constant(pos, use)};
      Inst& t = m.insts[pos];  // the type itself, after what was placed before it
      t[2] = type;
      std::copy(std::begin(ids), std::end(ids), t.begin() + 3);
      f16 |= width == 16;
      i = pos;
    } else if (auto def = m.definition(comp); def && opcode(m.insts[*def]) == OpConstant &&
                                               (width = marker_width(m.insts[*def][3])) != 0) {
      // Id form: only the component is a marker constant.
      size_t pos = i;
      const uint32_t type = m.float_type(pos, width);
      m.insts[pos][2] = type;
      f16 |= width == 16;
      i = pos;
    } else if (def && opcode(m.insts[*def]) == OpTypeFloat) {
      f16 |= m.insts[*def][2] == 16;  // already valid
    } else {
      throw std::runtime_error(fmt::format(
          "cooperative matrix type {}: component {} is neither a marker (0x7F16/0x7F32 past the id bound {}), nor a "
          "marker constant, nor a float type",
          m.insts[i][1], comp, original_bound));
    }
  }
  if (!any) return m.words();
  if (f16 && !m.has_capability(kCapabilityFloat16))
    m.insert_after_last(OpCapability, OpCapability, make(OpCapability, {kCapabilityFloat16}));
  if (!m.has_capability(kCapabilityCooperativeMatrixKHR))
    m.insert_after_last(OpCapability, OpCapability, make(OpCapability, {kCapabilityCooperativeMatrixKHR}));
  if (!m.has_extension(kExtension)) m.insert_after_last(OpExtension, OpCapability, make(OpExtension, string_words(kExtension)));
  return m.words();
}

std::string check_cooperative_matrix(std::span<const uint32_t> words) {
  try {
    Module m(words);
    bool any = false, f16 = false;
    for (size_t i = 0; i < m.insts.size(); ++i) {
      const Inst& t = m.insts[i];
      if (opcode(t) != kOpTypeCooperativeMatrixKHR) continue;
      any = true;
      if (t.size() != 7) return fmt::format("cooperative matrix type with {} words", t.size());
      if (t[1] >= m.bound()) return fmt::format("cooperative matrix type id {} past the bound {}", t[1], m.bound());
      const auto before = [&](uint32_t id) -> const Inst* {
        const auto d = m.definition(id);
        return d && *d < i ? &m.insts[*d] : nullptr;
      };
      const Inst* comp = before(t[2]);
      if (!comp || opcode(*comp) != OpTypeFloat || (comp->at(2) != 16 && comp->at(2) != 32))
        return fmt::format("cooperative matrix type {}: component {} is not an f16/f32 type declared before it", t[1], t[2]);
      f16 |= comp->at(2) == 16;
      uint32_t v[4];
      for (int k = 0; k < 4; ++k) {
        const Inst* c = before(t[3 + k]);
        const Inst* type = c && opcode(*c) == OpConstant && c->size() == 4 ? before(c->at(1)) : nullptr;
        if (!type || opcode(*type) != OpTypeInt || type->at(2) != 32)
          return fmt::format("cooperative matrix type {}: operand {} ({}) is not a 32-bit integer constant declared "
                             "before it", t[1], 3 + k, t[3 + k]);
        v[k] = c->at(3);
      }
      if (v[0] != kScopeSubgroup || v[1] == 0 || v[2] == 0 || v[3] > 2)
        return fmt::format("cooperative matrix type {}: scope {}, rows {}, cols {}, use {}", t[1], v[0], v[1], v[2], v[3]);
    }
    if (!any) return "";
    if (!m.has_capability(kCapabilityCooperativeMatrixKHR)) return "no OpCapability CooperativeMatrixKHR";
    if (!m.has_extension(kExtension)) return fmt::format("no OpExtension \"{}\"", kExtension);
    if (f16 && !m.has_capability(kCapabilityFloat16)) return "f16 components without OpCapability Float16";
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::string c_array(std::span<const uint32_t> words) {
  std::string s = "{";
  for (size_t i = 0; i < words.size(); ++i) s += fmt::format("{}0x{:08x}", i == 0 ? "" : i % 8 ? "," : ",\n", words[i]);
  return s + "}\n";
}

}  // namespace hl::vk::spirv
