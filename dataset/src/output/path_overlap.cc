#include "ffyolo/output/path_overlap.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <tuple>
#include <utility>

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

// `parts` joined as an absolute path.
std::string Joined(const std::vector<std::string>& parts, size_t count) {
  std::string path;
  for (size_t i = 0; i < count; ++i) path += "/" + parts[i];
  return path.empty() ? "/" : path;
}

// A mount as /proc/self/mountinfo lists it: its file system (major:minor), the folder of that file
// system mounted (its root: "/" unless bound) and where.
struct Mount {
  std::string file_system, root, point;
};

// A mountinfo field with its escapes (\040 for a space, ...) undone.
std::string Unescaped(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    const std::string code = field.substr(i + 1, 3);
    if (field[i] == '\\' && code.size() == 3 && code.find_first_not_of("01234567") == std::string::npos) {
      out += static_cast<char>(std::stoi(code, nullptr, 8));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

// This process's mounts, in mountinfo's order (a mount over another comes after it); none when
// /proc is not there.
std::vector<Mount> Mounts() {
  std::vector<Mount> mounts;
  std::FILE* file = std::fopen("/proc/self/mountinfo", "re");
  if (file == nullptr) return mounts;
  char* line = nullptr;
  size_t capacity = 0;
  while (::getline(&line, &capacity, file) > 0) {
    // ID PARENT MAJOR:MINOR ROOT POINT ...
    std::vector<std::string> fields;
    const std::string text(line);
    for (size_t begin = 0; fields.size() < 5 && begin < text.size();) {
      const size_t end = std::min(text.find_first_of(" \n", begin), text.size());
      fields.push_back(text.substr(begin, end - begin));
      begin = end + 1;
    }
    if (fields.size() == 5) mounts.push_back({fields[2], Unescaped(fields[3]), Unescaped(fields[4])});
  }
  std::free(line);
  std::fclose(file);
  return mounts;
}

// Where a path is in the file system: its resolved components; the object (device, inode) that each
// leading part of them that exists is (objects[k] that of the first k components, objects[0] the
// root's); and, where mountinfo says, its file system and its components from that file system's root,
// the same for every name a bind mount gives it.
struct Place {
  std::vector<std::string> parts;
  std::vector<std::pair<dev_t, ino_t>> objects;
  std::string file_system;  // "" when unknown
  std::vector<std::string> on_file_system;
  size_t mount_depth = 0;  // the components of the mount point it is reached through
};

Place Locate(const std::string& path, const std::vector<Mount>& mounts) {
  Place place;
  const std::string resolved = ResolvedPath(path);
  place.parts = Components(resolved);
  for (size_t k = 0; k <= place.parts.size(); ++k) {
    struct stat st;
    if (::stat(Joined(place.parts, k).c_str(), &st) != 0) break;
    place.objects.emplace_back(st.st_dev, st.st_ino);
  }
  const Mount* mount = nullptr;  // the last of the longest mount points holding the path: the one on top
  for (const Mount& m : mounts)
    if (PathWithin(resolved, m.point) && (mount == nullptr || m.point.size() >= mount->point.size())) mount = &m;
  if (mount != nullptr) {
    place.file_system = mount->file_system;
    place.mount_depth = Components(mount->point).size();
    place.on_file_system = Components(mount->root);
    place.on_file_system.insert(place.on_file_system.end(), place.parts.begin() + place.mount_depth,
                                place.parts.end());
  }
  return place;
}

// How `inner` reaches `outer` (PlaceWithin): the components of `inner` that lead to it, and whether
// they lead to `outer` itself or, through a folder bound from inside `outer`, to a place inside it.
struct Reach {
  size_t depth;
  bool exact;
};
constexpr size_t kNowhere = static_cast<size_t>(-1);

Reach ReachOf(const Place& outer, const Place& inner) {
  // One of the folders `inner` goes through is `outer`'s, or its nearest existing folder's followed by
  // the same names.
  if (!outer.objects.empty()) {
    const size_t existing = outer.objects.size() - 1;  // outer's components that exist
    const size_t missing = outer.parts.size() - existing;
    for (size_t depth = 0; depth < inner.objects.size(); ++depth) {
      if (inner.objects[depth] != outer.objects.back() || depth + missing > inner.parts.size()) continue;
      if (std::equal(outer.parts.begin() + existing, outer.parts.end(), inner.parts.begin() + depth))
        return {depth + missing, true};
    }
  }
  // Or `inner` lies in `outer` on their file system: a folder bound from inside `outer` has a name
  // that goes through none of `outer`'s.
  if (!outer.file_system.empty() && outer.file_system == inner.file_system &&
      inner.on_file_system.size() >= outer.on_file_system.size() &&
      std::equal(outer.on_file_system.begin(), outer.on_file_system.end(), inner.on_file_system.begin())) {
    const size_t below = inner.on_file_system.size() - outer.on_file_system.size();
    const size_t depth = inner.parts.size() - std::min(below, inner.parts.size() - inner.mount_depth);
    return {depth, depth + below == inner.parts.size()};
  }
  // Not even the root could be looked at: the names alone.
  const bool unseen = outer.objects.empty() || inner.objects.empty();
  if (unseen && PathWithin(Joined(inner.parts, inner.parts.size()), Joined(outer.parts, outer.parts.size())))
    return {outer.parts.size(), true};
  return {kNowhere, true};
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

bool PlaceWithin(const std::string& inner, const std::string& outer) {
  const std::vector<Mount> mounts = Mounts();
  return ReachOf(Locate(outer, mounts), Locate(inner, mounts)).depth != kNowhere;
}

ffr::Status CheckOutputApart(const std::string& flag, const std::string& output, const std::vector<ToolInput>& inputs,
                             bool output_emptied) {
  const std::vector<Mount> mounts = Mounts();
  const Place output_place = Locate(output, mounts);
  const std::string resolved_output = Joined(output_place.parts, output_place.parts.size());
  for (const ToolInput& input : inputs) {
    if (input.path.empty()) continue;
    const Place input_place = Locate(input.path, mounts);
    const std::string resolved_input = Joined(input_place.parts, input_place.parts.size());
    const Reach inside = ReachOf(input_place, output_place);
    const Reach holds =
        output_emptied || inside.depth != kNowhere ? ReachOf(output_place, input_place) : Reach{kNowhere, true};
    if (inside.depth == kNowhere && holds.depth == kNowhere) continue;
    const std::string relation = inside.depth != kNowhere && holds.depth != kNowhere ? " is the "
                                 : inside.depth != kNowhere                          ? " lies inside the "
                                                                                     : " contains the ";
    std::string message = flag + " " + output + relation + input.what + " " + input.path;
    // Names that do not say it: a folder the one path goes through is the other's under another name.
    const auto& [named, reached, reach] = inside.depth != kNowhere ? std::tuple(&input_place, &output_place, inside)
                                                                   : std::tuple(&output_place, &input_place, holds);
    const std::string as_named = Joined(named->parts, named->parts.size());
    std::string note;
    if (resolved_output != output || resolved_input != input.path)
      note = "resolved: " + resolved_output + " and " + resolved_input;
    if (!PathWithin(Joined(reached->parts, reached->parts.size()), as_named))
      note += (note.empty() ? "" : "; ") + Joined(reached->parts, reach.depth) + (reach.exact ? " is " : " lies in ") +
              as_named + " under another name: a bind mount or a hard link";
    if (!note.empty()) message += " (" + note + ")";
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
