#include "ffyolo/config_path.h"

#include <filesystem>
#include <system_error>

#include "ffr/env.h"

namespace ffyolo {
namespace {

// Found once: beside the running binary when it is installed (so that a moved
// prefix keeps working), else in the source tree.
const std::string& ShippedConfigDir() {
  static const std::string dir = [] {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::string installed = (exe.parent_path() / FFYOLO_INSTALLED_CONFIG_DIR).lexically_normal().string();
    return !ec && ffr::Env::Default()->IsDirectory(installed) ? installed : std::string(FFYOLO_CONFIG_DIR);
  }();
  return dir;
}

}  // namespace

std::string ResolveConfig(const std::string& name, const std::string& kind) {
  ffr::Env* env = ffr::Env::Default();
  if (env->FileExists(name) || name.find('/') != std::string::npos) return name;
  const std::string shipped = ShippedConfigDir() + "/" + kind + "/" + name;
  if (env->FileExists(shipped)) return shipped;
  if (env->FileExists(shipped + ".yaml")) return shipped + ".yaml";
  return name;
}

}  // namespace ffyolo
