#include "ffyolo/output/disk_space.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "ffyolo/output/path_overlap.h"

namespace ffyolo {

bool FreeBytes(const std::string& path, uint64_t* bytes) {
  std::string p = ResolvedPath(path);  // the nearest folder that exists holds what `path` will be
  struct stat exists;
  while (p != "/" && ::stat(p.c_str(), &exists) != 0) p.erase(std::max<size_t>(p.rfind('/'), 1));
  struct statvfs st;
  if (::statvfs(p.c_str(), &st) != 0) return false;
  *bytes = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
  return true;
}

std::string ByteSize(uint64_t bytes) {
  char buf[32];
  if (bytes >= uint64_t{10'000'000'000})
    std::snprintf(buf, sizeof(buf), "%.1f GB", static_cast<double>(bytes) / 1e9);
  else
    std::snprintf(buf, sizeof(buf), "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

bool IsOutOfSpace(const Status& s) {
  return !s.ok() && s.message().find(std::strerror(ENOSPC)) != std::string::npos;
}

namespace {

std::string Advice(const SpaceNeeded& needs) {
  return "free some space" + (needs.move.empty() ? "" : " or " + needs.move) +
         ", then run the same command again to resume";
}

}  // namespace

Status CheckFreeSpace(const SpaceNeeded& needs) {
  const uint64_t needed = needs.total > needs.kept ? needs.total - needs.kept : 0;
  uint64_t free = 0;
  if (needed == 0 || !FreeBytes(needs.output, &free) || needed <= free) return Status::OK();
  return Status::IOError(needs.output + ": not enough free space: " + needs.writer + " needs " + needs.amount + " " +
                         ByteSize(needed) + (needs.kept > 0 ? " more" : "") + needs.what + needs.why + ", and " +
                         ByteSize(free) + " is free on its file system; " + Advice(needs));
}

Status WithSpaceNeeded(const Status& s, const SpaceNeeded& needs) {
  if (!IsOutOfSpace(s)) return s;
  std::string m = s.message() + ": the disk is full;";
  if (needs.total > 0)
    m += " " + needs.writer + " needs " + needs.amount + " " + ByteSize(needs.total) + needs.what + " in all;";
  uint64_t free = 0;
  if (FreeBytes(needs.output, &free)) m += " " + ByteSize(free) + " is free on the output's file system now;";
  return Status::IOError(m + " " + Advice(needs));
}

}  // namespace ffyolo
