#include "model/gguf_vocab.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_set>

#include "common.h"

namespace hl {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using quant::printable;

// The special token kinds gguf-py's SpecialVocab reads, in its order, and the GGUF key each is written to (cls has
// no key: SpecialVocab finds no writer for it and skips it, and so does this).
constexpr std::pair<const char*, const char*> kSpecialKeys[] = {
    {"bos", "tokenizer.ggml.bos_token_id"},     {"eos", "tokenizer.ggml.eos_token_id"},
    {"unk", "tokenizer.ggml.unknown_token_id"}, {"sep", "tokenizer.ggml.seperator_token_id"},  // sic (llama.cpp)
    {"pad", "tokenizer.ggml.padding_token_id"}, {"cls", nullptr},
    {"mask", "tokenizer.ggml.mask_token_id"}};
// add_<kind>_token flags with a GGUF key (the others SpecialVocab reads but cannot write).
constexpr const char* kAddKinds[] = {"bos", "eos", "sep"};

// The pre-tokenizer split regexes of Qwen's tokenizer.json files and llama.cpp's names for them (llama-vocab.cpp:
// "qwen2" for Qwen2/2.5/3, "qwen35" for Qwen3.5/3.6, whose letter runs also take combining marks \p{M}).
// convert_hf_to_gguf.py tells them apart by hashing the tokenization of a test text; the regex is what differs.
constexpr std::pair<const char*, const char*> kKnownSplits[] = {
    {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
     "qwen2"},
    {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
     "qwen35"},
};

std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += char(cp);
  } else if (cp < 0x800) {
    s += char(0xc0 | (cp >> 6)), s += char(0x80 | (cp & 0x3f));
  } else {
    s += char(0xe0 | (cp >> 12)), s += char(0x80 | ((cp >> 6) & 0x3f)), s += char(0x80 | (cp & 0x3f));
  }
  return s;
}

// GPT-2's byte-level alphabet in its vocabulary order: the printable bytes as themselves, then every other byte b as
// the code point 256 + (its rank among those), which is how byte-level BPE spells a byte as a visible character.
std::vector<std::string> byte_alphabet() {
  std::vector<std::string> out;
  std::vector<bool> printable_byte(256, false);
  for (int b = 0; b < 256; ++b) printable_byte[size_t(b)] = (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
  for (int b = 0; b < 256; ++b)
    if (printable_byte[size_t(b)]) out.push_back(utf8(uint32_t(b)));
  uint32_t n = 0;
  for (int b = 0; b < 256; ++b)
    if (!printable_byte[size_t(b)]) out.push_back(utf8(256 + n++));
  return out;
}

json read_json_file(const fs::path& p) {
  std::ifstream f(p);
  if (!f) fail("cannot open '{}'", p.string());
  try {
    return json::parse(f);
  } catch (const json::exception&) {
    fail("'{}' is not valid JSON", p.string());
  }
}

// convert_hf_to_gguf.py's does_token_look_special: added tokens that some checkpoints forget to mark special.
bool looks_special(const std::string& t) {
  auto wraps = [&](const std::string& a, const std::string& b) {
    return t.size() >= a.size() + b.size() && t.compare(0, a.size(), a) == 0 && t.compare(t.size() - b.size(), b.size(), b) == 0;
  };
  return t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]" || wraps("<|", "|>") ||
         wraps("<\xef\xbd\x9c", "\xef\xbd\x9c>") || wraps("<unused", ">");
}

// A string field of an object, or "" when it is absent or not a string (json::value() throws on a wrong type).
std::string str_field(const json& o, const char* key) {
  return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string();
}

// The split regexes of a pre_tokenizer (a Split, or a Sequence of them), and whether it is byte-level.
void scan_pre_tokenizer(const json& p, std::vector<std::string>& regexes, bool& byte_level) {
  if (!p.is_object()) return;
  const std::string type = str_field(p, "type");
  if (type == "ByteLevel") byte_level = true;
  if (type == "Split" && p.contains("pattern") && p["pattern"].is_object() && p["pattern"].contains("Regex") &&
      p["pattern"]["Regex"].is_string())
    regexes.push_back(p["pattern"]["Regex"].get<std::string>());
  if (type == "Sequence" && p.contains("pretokenizers") && p["pretokenizers"].is_array())
    for (const json& q : p["pretokenizers"]) scan_pre_tokenizer(q, regexes, byte_level);
}

// A token id field: a non-negative integer (a bool is not one).
std::optional<int64_t> id_of(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>() > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(v.get<uint64_t>());
  if (v.is_number_integer()) return v.get<int64_t>();
  return std::nullopt;
}

}  // namespace

void GgufVocab::check(int64_t n_vocab) const {
  const std::string from = source.empty() ? "vocabulary" : source;
  if (int64_t(tokens.size()) != n_vocab)
    fail("{}: {} tokens for an embedding of {} rows (llama.cpp needs one token per row)", from, tokens.size(), n_vocab);
  if (types.size() != tokens.size()) fail("{}: {} token types for {} tokens", from, types.size(), tokens.size());
  std::unordered_set<std::string_view> seen;
  for (size_t i = 0; i < tokens.size(); ++i)
    if (!seen.insert(tokens[i]).second)
      fail("{}: token {} appears twice (again at id {}; llama.cpp needs distinct token strings)", from,
           printable(tokens[i], 40), i);
  for (auto& [kind, id] : special_ids)
    if (int64_t(id) >= n_vocab) fail("{}: {} token id {} is outside the {} tokens", from, kind, id, n_vocab);
}

void GgufVocab::write(quant::Writer& out, const std::string& arch) const {
  out.set(arch + ".vocab_size", quant::Value(uint32_t(tokens.size())));
  out.set("tokenizer.ggml.model", model);
  out.set("tokenizer.ggml.pre", pre);
  out.set("tokenizer.ggml.tokens", quant::Value::array_of<std::string>(tokens));
  out.set("tokenizer.ggml.token_type", quant::Value::array_of<int32_t>(types));
  // Written even when empty: llama.cpp's loader needs the key for a gpt2 vocabulary ("cannot find tokenizer merges").
  out.set("tokenizer.ggml.merges", quant::Value::array_of<std::string>(merges));
  for (auto& [kind, id] : special_ids)
    for (auto& [k, key] : kSpecialKeys)
      if (kind == k && key) out.set(key, quant::Value(id));
  for (auto& [kind, on] : add_special) out.set(fmt::format("tokenizer.ggml.add_{}_token", kind), quant::Value(on));
  if (!chat_template.empty()) out.set("tokenizer.chat_template", chat_template);
}

std::string GgufVocab::describe() const {
  std::string s = fmt::format("{}/{}, {} tokens, {} merges", model, pre, tokens.size(), merges.size());
  for (auto& [kind, id] : special_ids) s += fmt::format(", {} {}", kind, id);
  return source.empty() ? s : s + " (" + source + ")";
}

GgufVocab placeholder_vocab(int64_t n_vocab) {
  if (n_vocab < 1) fail("placeholder vocabulary: {} tokens", n_vocab);
  GgufVocab v;
  v.pre = "qwen2";
  v.source = "placeholder";
  v.tokens.reserve(size_t(n_vocab));
  const std::vector<std::string> bytes = byte_alphabet();
  const int64_t n_bytes = std::min<int64_t>(256, n_vocab - 1);
  for (int64_t i = 0; i < n_vocab - 1; ++i) {
    v.tokens.push_back(i < n_bytes ? bytes[size_t(i)] : fmt::format("[PAD{}]", i));
    v.types.push_back(int32_t(i < n_bytes ? TokenType::Normal : TokenType::Unused));
  }
  // One merge, two spaces into one token, where there is room for it: gguf-py never writes an empty array (every
  // converter-made gpt2 file has merges), so a file with merges is the well-trodden path through llama.cpp's loader.
  if (n_vocab >= 258) {
    const std::string space = bytes[188 + 32];  // byte 0x20: the 33rd of the non-printable bytes, U+0120
    v.tokens[256] = space + space;
    v.types[256] = int32_t(TokenType::Normal);
    v.merges = {space + " " + space};
  }
  v.tokens.push_back("<|endoftext|>");
  v.types.push_back(int32_t(TokenType::Control));
  const auto last = uint32_t(n_vocab - 1);
  v.special_ids = {{"bos", last}, {"eos", last}, {"pad", last}};
  v.add_special = {{"bos", false}};  // Qwen's tokenizers add no BOS
  v.check(n_vocab);
  return v;
}

std::optional<GgufVocab> hf_vocab(const std::string& dir, int64_t n_vocab) {
  const fs::path path = fs::path(dir) / "tokenizer.json";
  if (!fs::is_regular_file(path)) return std::nullopt;
  const std::string file = path.string();
  const json tok = read_json_file(path);
  if (!tok.is_object()) fail("'{}': not a JSON object", file);
  if (!tok.contains("model") || !tok["model"].is_object()) fail("'{}': no \"model\" object", file);
  const json& model = tok["model"];
  if (model.contains("type") && str_field(model, "type") != "BPE")
    fail("'{}': a {} tokenizer; only byte-level BPE (llama.cpp's gpt2 vocabularies) is written", file,
         printable(model["type"].is_string() ? model["type"].get<std::string>() : model["type"].type_name(), 20));
  if (!model.contains("vocab") || !model["vocab"].is_object()) fail("'{}': model.vocab is not an object of token -> id", file);
  if (n_vocab < 1) fail("'{}': an embedding of {} rows", file, n_vocab);

  GgufVocab v;
  v.source = "tokenizer.json of " + dir;
  // Ids come from the file: each is checked against the embedding's rows before it indexes anything.
  std::vector<std::string> tokens(static_cast<size_t>(n_vocab));
  std::vector<int8_t> kind(static_cast<size_t>(n_vocab), 0);  // 0 none, 1 model.vocab, 2 added, 3 added and special
  auto place = [&](const std::string& text, const json& id_field, int8_t k, const char* where) {
    const auto id = id_of(id_field);
    if (!id || *id < 0)
      fail("'{}': {} token {} has id {}, not a non-negative integer", file, where, printable(text, 40),
           printable(id_field.dump(), 40));
    if (*id >= n_vocab)
      fail("'{}': {} token {} has id {}, beyond the embedding's {} rows", file, where, printable(text, 40), *id, n_vocab);
    const auto i = size_t(*id);
    if (kind[i] && tokens[i] != text)
      fail("'{}': id {} names both {} and {}", file, *id, printable(tokens[i], 40), printable(text, 40));
    tokens[i] = text;
    kind[i] = std::max(kind[i], k);
  };
  for (auto it = model["vocab"].begin(); it != model["vocab"].end(); ++it) place(it.key(), it.value(), 1, "model.vocab");
  std::vector<std::pair<std::string, int64_t>> added;  // (content, id) in file order: special tokens are looked up here
  if (tok.contains("added_tokens") && !tok["added_tokens"].is_null()) {
    if (!tok["added_tokens"].is_array()) fail("'{}': added_tokens is not an array", file);
    for (const json& a : tok["added_tokens"]) {
      if (!a.is_object() || !a.contains("content") || !a["content"].is_string() || !a.contains("id"))
        fail("'{}': an added token without a string content and an id", file);
      const std::string text = a["content"].get<std::string>();
      const bool special = a.contains("special") && a["special"].is_boolean() && a["special"].get<bool>();
      place(text, a["id"], special ? 3 : 2, "added");
      added.emplace_back(text, *id_of(a["id"]));
    }
  }
  // convert_hf_to_gguf.py's get_vocab_base: rows no token names are "[PAD<i>]" (UNUSED); added tokens are CONTROL
  // when special or special-looking, else USER_DEFINED with SentencePiece's U+2581 read as a space.
  v.tokens.reserve(size_t(n_vocab));
  for (int64_t i = 0; i < n_vocab; ++i) {
    std::string t = std::move(tokens[size_t(i)]);
    TokenType type = TokenType::Normal;
    if (!kind[size_t(i)]) {
      t = fmt::format("[PAD{}]", i), type = TokenType::Unused;
    } else if (kind[size_t(i)] >= 2) {
      type = kind[size_t(i)] == 3 || looks_special(t) ? TokenType::Control : TokenType::UserDefined;
      if (type == TokenType::UserDefined)
        for (size_t p; (p = t.find("\xe2\x96\x81")) != std::string::npos;) t.replace(p, 3, " ");
    }
    v.tokens.push_back(std::move(t));
    v.types.push_back(int32_t(type));
  }

  std::vector<std::string> regexes;
  bool byte_level = false;
  if (tok.contains("pre_tokenizer")) scan_pre_tokenizer(tok["pre_tokenizer"], regexes, byte_level);
  for (const std::string& r : regexes)
    for (auto& [known, name] : kKnownSplits)
      if (r == known && v.pre.empty()) v.pre = name;
  if (!byte_level || v.pre.empty())
    fail("'{}': the pre-tokenizer is not a byte-level split with Qwen2's or Qwen3.5's regex (llama.cpp's qwen2, "
         "qwen35){}", file, regexes.empty() ? "" : ": its regex is " + printable(regexes.front(), 60));

  // Merges: "a b" strings, or [a, b] pairs (tokenizers >= 0.20), whose spaces are written as U+0120 as gguf-py does.
  if (model.contains("merges") && !model["merges"].is_null()) {
    if (!model["merges"].is_array()) fail("'{}': model.merges is not an array", file);
    for (const json& m : model["merges"]) {
      if (m.is_string()) {
        v.merges.push_back(m.get<std::string>());
      } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
        std::string s;
        for (int part = 0; part < 2; ++part) {
          for (char c : m[part].get<std::string>()) s += c == ' ' ? utf8(0x120) : std::string(1, c);
          if (part == 0) s += ' ';
        }
        v.merges.push_back(std::move(s));
      } else {
        fail("'{}': merge #{} is {}, not \"a b\" or [a, b]", file, v.merges.size(), printable(m.dump(), 40));
      }
    }
  }

  // Special tokens as gguf-py's SpecialVocab finds them: tokenizer_config.json's <kind>_token looked up among the
  // added tokens, then config.json's <kind>_token_id for kinds still unset; ids beyond the vocabulary are skipped.
  auto set_special = [&](const std::string& kind_name, std::optional<int64_t> id, const std::string& from) {
    if (!id) return;
    if (*id < 0) fail("'{}': {} token id {} is negative", from, kind_name, *id);
    if (*id >= n_vocab) return;
    for (auto& [k, existing] : v.special_ids)
      if (k == kind_name) return;
    v.special_ids.emplace_back(kind_name, uint32_t(*id));
  };
  const fs::path cfg_path = fs::path(dir) / "tokenizer_config.json";
  if (fs::is_regular_file(cfg_path)) {
    json cfg = read_json_file(cfg_path);
    if (!cfg.is_object()) fail("'{}': not a JSON object", cfg_path.string());
    auto content = [&](const char* k) -> std::string {
      const std::string key = std::string(k) + "_token";
      if (!cfg.contains(key)) return "";
      const json& e = cfg[key];
      if (e.is_string()) return e.get<std::string>();
      if (e.is_object() && e.contains("content") && e["content"].is_string()) return e["content"].get<std::string>();
      return "";
    };
    std::string bos = content("bos"), eos = content("eos");
    if (bos.empty() && !content("cls").empty()) bos = content("cls");  // SpecialVocab: cls stands in for bos,
    if (eos.empty() && !content("sep").empty()) eos = content("sep");  // sep for eos
    for (auto& [k, key] : kSpecialKeys) {
      const std::string kind_name = k;
      const std::string add_key = "add_" + kind_name + "_token";
      if (cfg.contains(add_key) && cfg[add_key].is_boolean())
        for (const char* a : kAddKinds)
          if (kind_name == a) v.add_special.emplace_back(kind_name, cfg[add_key].get<bool>());
      const std::string c = kind_name == "bos" ? bos : kind_name == "eos" ? eos : content(k);
      if (c.empty()) continue;
      for (auto& [text, id] : added)
        if (text == c) {
          set_special(kind_name, id, cfg_path.string());
          break;
        }
    }
    // The chat template: tokenizer_config.json's (a string; of a list of named templates, the default one), else
    // chat_template.jinja, else chat_template.json's.
    json tmpl = cfg.contains("chat_template") ? cfg["chat_template"] : json();
    if (tmpl.is_null() && fs::is_regular_file(fs::path(dir) / "chat_template.jinja")) {
      std::ifstream f(fs::path(dir) / "chat_template.jinja");
      std::stringstream ss;
      ss << f.rdbuf();
      tmpl = ss.str();
    } else if (tmpl.is_null() && fs::is_regular_file(fs::path(dir) / "chat_template.json")) {
      const json j = read_json_file(fs::path(dir) / "chat_template.json");
      if (j.is_object() && j.contains("chat_template")) tmpl = j["chat_template"];
    }
    if (tmpl.is_string()) v.chat_template = tmpl.get<std::string>();
    if (tmpl.is_array())
      for (const json& t : tmpl)
        if (str_field(t, "name") == "default" && t.contains("template") && t["template"].is_string())
          v.chat_template = t["template"].get<std::string>();
  }
  const fs::path config_path = fs::path(dir) / "config.json";
  if (fs::is_regular_file(config_path)) {
    const json cfg = read_json_file(config_path);
    if (cfg.is_object())
      for (auto& [k, key] : kSpecialKeys) {
        const std::string field = std::string(k) + "_token_id";
        const json* f = cfg.contains(field) ? &cfg[field]
                        : cfg.contains("text_config") && cfg["text_config"].is_object() && cfg["text_config"].contains(field)
                            ? &cfg["text_config"][field]
                            : nullptr;
        if (f) set_special(k, id_of(*f), config_path.string());
      }
  }
  // In the order of the keys (bos, eos, unk, ...), whichever file named them: as read_gguf_vocab reads them back.
  auto rank = [](const std::string& kind) {
    for (size_t i = 0; i < std::size(kSpecialKeys); ++i)
      if (kind == kSpecialKeys[i].first) return i;
    return std::size(kSpecialKeys);
  };
  std::stable_sort(v.special_ids.begin(), v.special_ids.end(),
                   [&](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
  v.check(n_vocab);
  return v;
}

std::optional<GgufVocab> read_gguf_vocab(const quant::Metadata& m, int64_t n_vocab) {
  if (!m.has("tokenizer.ggml.model")) return std::nullopt;
  GgufVocab v;
  v.source = "the file's tokenizer.ggml.*";
  v.model = m.get_string("tokenizer.ggml.model");
  if (m.has("tokenizer.ggml.pre")) v.pre = m.get_string("tokenizer.ggml.pre");
  if (m.has("tokenizer.ggml.tokens")) {
    // The array's length was bounded by the file's size when it was read; here it must also match the embedding.
    const quant::Array& a = m.get_array("tokenizer.ggml.tokens");
    if (int64_t(a.items.size()) != n_vocab)
      fail("{}: tokenizer.ggml.tokens has {} entries for an embedding of {} rows", m.source(), a.items.size(), n_vocab);
    v.tokens = m.get_array_of<std::string>("tokenizer.ggml.tokens");
  }
  if (m.has("tokenizer.ggml.token_type")) {
    v.types = m.get_array_of<int32_t>("tokenizer.ggml.token_type");
    if (v.types.size() != v.tokens.size())
      fail("{}: tokenizer.ggml.token_type has {} entries for {} tokens", m.source(), v.types.size(), v.tokens.size());
  } else {
    v.types.assign(v.tokens.size(), int32_t(TokenType::Normal));
  }
  if (m.has("tokenizer.ggml.merges")) v.merges = m.get_array_of<std::string>("tokenizer.ggml.merges");
  for (auto& [kind, key] : kSpecialKeys) {
    if (!key || !m.has(key)) continue;
    const int64_t id = m.get_int(key);
    if (id < 0 || id >= n_vocab) fail("{}: {} = {} is outside the {} tokens", m.source(), key, id, n_vocab);
    v.special_ids.emplace_back(kind, uint32_t(id));
  }
  const std::string arch = m.has("general.architecture") ? m.get_string("general.architecture") : "";
  if (const std::string key = arch + ".vocab_size"; m.has(key) && m.get_int(key) != n_vocab)
    fail("{}: {} = {} but token_embd.weight has {} rows", m.source(), key, m.get_int(key), n_vocab);
  if (!v.tokens.empty()) v.check(n_vocab);
  return v;
}

}  // namespace hl
