#include "ffyolo/output/path_overlap.h"

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

ffr::Status CheckOutputApart(const std::string& flag, const std::string& output, const std::vector<ToolInput>& inputs,
                             bool output_emptied) {
  const fs::path resolved_output = ResolvedPath(output);
  for (const ToolInput& input : inputs) {
    if (input.path.empty()) continue;
    const fs::path resolved_input = ResolvedPath(input.path);
    const bool inside = PathWithin(resolved_output, resolved_input);
    const bool holds = output_emptied && PathWithin(resolved_input, resolved_output);
    if (!inside && !holds) continue;
    const std::string relation =
        resolved_output == resolved_input ? " is the " : inside ? " lies inside the " : " contains the ";
    std::string message = flag + " " + output + relation + input.what + " " + input.path;
    if (resolved_output.string() != output || resolved_input.string() != input.path)
      message += " (resolved: " + resolved_output.string() + " and " + resolved_input.string() + ")";
    return ffr::Status::InvalidArgument(message + ": writing there would overwrite the " + input.what +
                                        "; choose an output outside it");
  }
  return ffr::Status::OK();
}

ffr::Status CheckOutputFile(const std::string& flag, const std::string& path, bool replace,
                            const std::string& replace_flag) {
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(path, ec);
  if (!fs::exists(status)) return ffr::Status::OK();
  const std::string named = (flag.empty() ? "" : flag + " ") + path;
  if (!fs::is_regular_file(fs::status(path, ec)))
    return ffr::Status::AlreadyExists(named + " exists and is not a regular file; choose another name");
  if (replace) return ffr::Status::OK();
  return ffr::Status::AlreadyExists(named + " exists; " + replace_flag + " replaces it");
}

}  // namespace ffyolo
