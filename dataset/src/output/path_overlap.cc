#include "ffyolo/output/path_overlap.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

namespace ffyolo {
namespace {

// `path`'s components, without empty ones and ".".
std::vector<std::string> Components(const std::string& path) {
  std::vector<std::string> parts;
  for (size_t begin = 0; begin <= path.size();) {
    size_t end = path.find('/', begin);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(begin, end - begin);
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
    begin = end + 1;
  }
  return parts;
}

// `resolved` (absolute) with `part` appended, ".." taking the last component off.
void Append(const std::string& part, std::string* resolved) {
  if (part != "..") {
    if (resolved->back() != '/') *resolved += '/';
    *resolved += part;
  } else if (*resolved != "/") {
    const size_t slash = resolved->rfind('/');
    resolved->erase(slash == 0 ? 1 : slash);
  }
}

}  // namespace

std::string ResolvedPath(const std::string& path) {
  std::string absolute = path;
  if (path.empty() || path[0] != '/') {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == nullptr) return path;  // no current directory to resolve against
    absolute = std::string(cwd) + "/" + path;
  }
  const std::vector<std::string> parts = Components(absolute);
  // The longest leading part that exists, resolved by realpath (symlinks and ".."); the rest as written.
  size_t existing = parts.size();
  std::string resolved;
  for (;; --existing) {
    std::string prefix;
    for (size_t i = 0; i < existing; ++i) prefix += "/" + parts[i];
    if (prefix.empty()) prefix = "/";
    const std::unique_ptr<char, decltype(&std::free)> real(realpath(prefix.c_str(), nullptr), &std::free);
    if (real) {
      resolved = real.get();
      break;
    }
    if (existing == 0) {
      resolved = "/";
      break;
    }
  }
  for (size_t i = existing; i < parts.size(); ++i) Append(parts[i], &resolved);
  return resolved;
}

bool PathWithin(const std::string& inner, const std::string& outer) {
  if (outer == "/" || inner == outer) return true;
  return inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 && inner[outer.size()] == '/';
}

ffr::Status CheckOutputApart(const std::string& flag, const std::string& output, const std::vector<ToolInput>& inputs,
                             bool output_emptied) {
  const std::string resolved_output = ResolvedPath(output);
  for (const ToolInput& input : inputs) {
    if (input.path.empty()) continue;
    const std::string resolved_input = ResolvedPath(input.path);
    const bool inside = PathWithin(resolved_output, resolved_input);
    const bool holds = output_emptied && PathWithin(resolved_input, resolved_output);
    if (!inside && !holds) continue;
    const std::string relation =
        resolved_output == resolved_input ? " is the " : inside ? " lies inside the " : " contains the ";
    std::string message = flag + " " + output + relation + input.what + " " + input.path;
    if (resolved_output != output || resolved_input != input.path)
      message += " (resolved: " + resolved_output + " and " + resolved_input + ")";
    return ffr::Status::InvalidArgument(message + ": writing there would overwrite the " + input.what +
                                        "; choose an output outside it");
  }
  return ffr::Status::OK();
}

ffr::Status CheckOutputFile(const std::string& flag, const std::string& path, bool replace,
                            const std::string& replace_flag) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return ffr::Status::OK();
  const std::string named = (flag.empty() ? "" : flag + " ") + path;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return ffr::Status::AlreadyExists(named + " exists and is not a regular file; choose another name");
  if (replace) return ffr::Status::OK();
  return ffr::Status::AlreadyExists(named + " exists; " + replace_flag + " replaces it");
}

}  // namespace ffyolo
