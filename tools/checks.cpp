// Checks of command-line arguments that name files and directories, made before any computation starts.
#include <unistd.h>

#include <cctype>
#include <filesystem>

#include "quant/error.h"
#include "tools/commands.h"

namespace hl::cli {

namespace fs = std::filesystem;

void check_output_file(const std::string& path, const char* option) {
  if (path.empty()) fail("{} '': give a file name", option);
  std::error_code ec;
  if (fs::is_directory(path, ec)) fail("{} '{}': cannot write there: it is a directory", option, path);
  const fs::path parent = fs::path(path).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  if (!fs::is_directory(dir, ec))
    fail("{} '{}': cannot create the file: cannot write in directory '{}', which does not exist", option, path, dir);
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    fail("{} '{}': cannot create the file: cannot write in directory '{}', which is not writable", option, path, dir);
}

void check_output_dir(const std::string& dir, const char* option) {
  if (dir.empty()) fail("{} '': give a directory", option);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    fail("{} '{}': cannot create the directory: {}", option, dir, ec ? ec.message() : "not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) fail("{} '{}': the directory is not writable", option, dir);
}

void check_name(const std::string& name, const char* option) {
  const bool ok = !name.empty() && name.size() <= 64 && name[0] != '.' && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
  });
  if (!ok)
    fail("{} {}: a name (letters, digits, '-', '_', '.'; not a path), at most 64 characters", option, quant::printable(name, 40));
}

}  // namespace hl::cli
