#include "ffyolo/path_overlap.h"

#include <algorithm>

namespace ffyolo {

namespace fs = std::filesystem;

fs::path ResolvedPath(const std::string& path) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  fs::path resolved = fs::weakly_canonical(absolute, ec);
  if (ec) resolved = absolute.lexically_normal();
  if (resolved.filename().empty() && resolved.has_parent_path()) resolved = resolved.parent_path();
  return resolved;
}

bool PathWithin(const fs::path& inner, const fs::path& outer) {
  return std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end()).first == outer.end();
}

}  // namespace ffyolo
