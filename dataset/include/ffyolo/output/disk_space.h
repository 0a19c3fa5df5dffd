// Free space for the long writers (yolo-pack, the pixel cache): checked up
// front so that an output that cannot fit is refused before it fills the disk,
// and added to a write that failed for lack of it (ENOSPC: another writer
// filled the disk, or the estimate fell short), so that either way the user
// reads how much is needed, how much is free, and that the same command
// resumes once there is room.
#pragma once

#include <cstdint>
#include <string>

#include "ffr/status.h"

namespace ffyolo {

using ffr::Status;

// Free bytes for an unprivileged writer on the file system of `path` (or of
// its nearest existing ancestor); false when unknown.
bool FreeBytes(const std::string& path, uint64_t* bytes);

// "22.2 MB", or "118.3 GB" from 10 GB on: decimal units, as df -H prints them.
std::string ByteSize(uint64_t bytes);

// True when `s` failed for lack of space: its message holds strerror(ENOSPC),
// as Status::FromErrno writes it.
bool IsOutOfSpace(const Status& s);

// What a writer into `output` needs; the messages read
// "<writer> needs <amount> <size><what>".
struct SpaceNeeded {
  std::string output;   // the folder written into
  std::string writer;   // "the pack", "the pixel cache"
  std::string amount;   // "at least" (a lower bound) or "about" (an estimate)
  std::string what;     // " for its shards"
  std::string why;      // how `total` was reckoned: " (the source's images as they are)"
  std::string move;     // what else the user can do: "pack to another disk"; empty: nothing but free space
  uint64_t total = 0;   // bytes of the whole output; 0: unknown
  uint64_t kept = 0;    // of them, already written by an interrupted run that this one resumes
};

// IOError "<output>: not enough free space: ..." when total - kept is more
// than is free; OK when it fits or either is unknown.
Status CheckFreeSpace(const SpaceNeeded& needs);

// `s` with the space needed and free appended when IsOutOfSpace(s); any other
// status unchanged.
Status WithSpaceNeeded(const Status& s, const SpaceNeeded& needs);

}  // namespace ffyolo
