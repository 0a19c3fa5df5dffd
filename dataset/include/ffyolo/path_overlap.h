// Whether two paths overlap, the way the tools refuse an output that is, holds
// or lies inside an input: writing (or emptying) it would destroy the input.
#pragma once

#include <filesystem>
#include <string>

namespace ffyolo {

// Where `path` really is: absolute, `..` and symlinks resolved as far as the
// path exists, no trailing separator.
std::filesystem::path ResolvedPath(const std::string& path);

// Whether `inner` is `outer` or lies below it, comparing whole path
// components (give both resolved).
bool PathWithin(const std::filesystem::path& inner, const std::filesystem::path& outer);

}  // namespace ffyolo
