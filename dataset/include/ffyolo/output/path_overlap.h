// Whether two paths overlap, the way the tools refuse an output that is, holds
// or lies inside an input: writing (or emptying) it would destroy the input.
// Whether two names are one place is the file system's answer (device and
// inode, and where a mount's folder lies on its file system), not their
// spelling: a bind mount, a hard link, a symlink or `..` gives one folder
// several names.
#pragma once

#include <string>
#include <vector>

#include "ffr/status.h"

namespace ffyolo {

// Where `path` really is: absolute, `..` and symlinks resolved as far as the
// path exists, the rest normalized as written, no trailing separator.
//
// These use POSIX calls, not std::filesystem, as does everything the Python
// extension links: once a process imports torch, its libstdc++ binds its own
// std::filesystem calls to the copies PyTorch's libraries export, built
// against another libstdc++ (docs/build.md, pytorch/pytorch#133437).
std::string ResolvedPath(const std::string& path);

// Whether `inner` is `outer` or lies below it, comparing whole path
// components (give both resolved): where a path is among others, not whether
// an output overlaps an input (PlaceWithin).
bool PathWithin(const std::string& inner, const std::string& outer);

// Whether `inner` is `outer` or lies below it in the file system: one of the
// folders `inner` is reached through (or `inner` itself) is the object (device
// and inode) that `outer` names, or, where `outer` does not exist yet, its
// nearest existing folder followed by the same names as `outer`'s missing part;
// or, as the mounts (/proc/self/mountinfo) say, `inner` lies in `outer` on their
// file system: a folder bound from inside `outer` is reached through none of its
// names. Paths as given (relative to the current folder). The test every output
// overlapping an input is refused by.
bool PlaceWithin(const std::string& inner, const std::string& outer);

// What a tool reads: "source", "dataset", ... and its path as the user gave it.
struct ToolInput {
  std::string what;
  std::string path;  // empty: not given, skipped
};

// The rule every tool's outputs follow: an output (a file or a folder the tool writes into, the
// `flag` it was given with) that is or lies inside one of `inputs` would overwrite it, so it is
// refused with InvalidArgument naming both (and their resolved paths when they differ). An output
// folder the tool may empty (yolo-pack --force) must not hold an input either.
ffr::Status CheckOutputApart(const std::string& flag, const std::string& output, const std::vector<ToolInput>& inputs,
                             bool output_emptied = false);

// An output file the user named (`flag`; "" for one a tool derives): one that is there already is
// refused, unless it is a regular file and `replace_flag` was given (`replace`): a device, a FIFO or a
// folder is never replaced, and a user's file only when asked. AlreadyExists names the file and the flag.
ffr::Status CheckOutputFile(const std::string& flag, const std::string& path, bool replace,
                            const std::string& replace_flag);

}  // namespace ffyolo
