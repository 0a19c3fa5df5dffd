// ShardSetWriter: the one crash-safe way a long job writes a folder of FFRecord
// shards (yolo-pack's dataset, a pixel cache), so that wherever it stops (a
// failed write, a kill, a full disk) the folder left is resumed or refused,
// never read as complete:
//
//   DIR/LOCK                  writers take turns on it (readers hold it shared)
//   DIR/<state file>          what the work is (its fingerprint): written before
//                             the first shard, removed after the commit file
//   DIR/[PART/]PART_k.ffr     shard k (of a part: yolo-pack's splits), written by
//                             ffr::ShardWriter under a temporary name, fsynced
//                             and renamed: one that is there is whole
//   DIR/<commit file>         the manifest, written last, the same way
//
// A run that finds the state file of its own work resumes it: the shards there
// are offered to the caller to keep, the others made again. What a folder in
// any other state means (refused, emptied, rebuilt), what a shard holds and
// what the commit file says are the caller's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ffr/env.h"
#include "ffr/status.h"

namespace ffyolo {

using ffr::Status;

// The file name of the k-th shard of a part: PART_00000.ffr, PART_00001.ffr,
// ... (FFRecord's naming; readers take them in sorted order).
std::string ShardFileName(size_t k);

// Whether `name` is a shard's, or the temporary name it is written under.
bool IsShardFile(const std::string& name);

// Items (images, samples) of the given sizes cut into shards: shard k holds
// items [starts[k], starts[k + 1]). `shards` > 0 asks for that many (one item
// each at most), their sizes differing by one item at most; 0 cuts a shard
// once it holds `shard_bytes`. A shard is never empty.
std::vector<size_t> PlanShards(const std::vector<uint64_t>& sizes, uint64_t shard_bytes, size_t shards = 0);

class ShardSetWriter {
 public:
  // `state_file` and `commit_file` are names inside `dir`.
  ShardSetWriter(ffr::Env* env, std::string dir, std::string state_file, std::string commit_file);

  const std::string& dir() const { return dir_; }
  std::string commit_path() const { return dir_ + "/" + commit_file_; }

  // Whether `name`, in dir, is one of the protocol's own files: LOCK, the
  // state or the commit file, or a temporary of either.
  bool IsOwnFile(const std::string& name) const;

  // Creates dir and takes its LOCK, held until this writer is destroyed.
  // While another holds it, calls `waiting` (when set), then waits.
  Status Lock(const std::function<void()>& waiting);

  // dir's entries but LOCK, once locked. A temporary state file alone is
  // removed first: a run killed while writing its state file wrote nothing
  // else, so the folder holds nothing.
  Status Entries(std::vector<std::string>* names);

  // The state file's verdict on the work described by `state`, once locked.
  enum class Found { kNoState, kSameWork, kOtherWork };
  Found ReadState(const std::string& state) const;

  // Writes the state file of the work `state` describes; before the first shard.
  Status Begin(const std::string& state);

  // Shard k of `part` ("": in dir itself).
  std::string ShardPath(const std::string& part, size_t k) const;
  bool HasShard(const std::string& part, size_t k) const;
  // What shards [0, count) of `part` that are there take: those a resumed run keeps.
  uint64_t ShardBytes(const std::string& part, size_t count) const;

  // Shard k of `part`. One already there (from the run this one resumes) goes
  // to `keep`, which sets *kept when it is whole and its items are accounted
  // for, or fails; one not kept is removed. Otherwise `make` writes it at the
  // path given, with ffr::ShardWriter.
  Status WriteShard(const std::string& part, size_t k,
                    const std::function<Status(const std::string& path, bool* kept)>& keep,
                    const std::function<Status(const std::string& path)>& make);

  // Ends the work: the commit file holds `manifest`, then the state file goes.
  // A crash between the two leaves both: the work is done, as a rerun finds.
  Status Commit(const std::string& manifest);

 private:
  ffr::Env* const env_;
  const std::string dir_, state_file_, commit_file_;
  std::unique_ptr<ffr::FileLock> lock_;
};

}  // namespace ffyolo
