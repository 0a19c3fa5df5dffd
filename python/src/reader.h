// ffyolo.Reader: an ffr::Reader as Python uses it. It remembers what it was opened from (a shard or
// a folder of shards, or a split of a packed dataset) and with which options, so that a pickled
// Reader reopens in another process; it may be closed while other threads read; and a process
// forked from the one that opened it is refused, as the child would share the parent's io_uring
// rings. A split's Reader holds the dataset open, and so its lock: no pack replaces the shards it
// reads while it lives, and one unpickled after a pack replaced them is refused.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nanobind/nanobind.h>

#include "ffr/reader.h"
#include "ffyolo/dataset.h"

namespace ffyolo::python {

class PyReader {
 public:
  // Where the samples are: `path` alone is a shard or a folder of shards; with a `split`, `path` is a
  // packed dataset and the reader covers that split's shards (ffyolo::Dataset::OpenReader).
  struct Source {
    std::string path;
    std::string split;
    bool bytes = false;  // `path` was given as bytes, and is handed back so
  };
  struct Options {
    std::string backend = "auto";
    bool direct_io = false;
    bool verify_checksums = true;
  };

  // Raises as the open fails (FileNotFoundError, ValueError, ...). A split's dataset is opened here;
  // `manifest_crc`, when not empty, is the identity (Dataset::ManifestCrc) it must still have.
  PyReader(Source source, Options options, const std::string& manifest_crc = "");
  // A split of `dataset`, which is open already (a Split's): the Reader shares it.
  PyReader(std::shared_ptr<const Dataset> dataset, Source source, Options options);

  int64_t size() const;
  std::string backend() const;
  const Source& source() const { return source_; }
  const Options& options() const { return options_; }
  // The identity of the split's dataset, which an unpickled Reader checks; "" for shards.
  const std::string& manifest_crc() const { return manifest_crc_; }
  bool closed() const { return reader_ == nullptr; }
  // Waits for no read: reads under way keep the reader they started with until they return. Lets go
  // of the dataset (its lock, unless a Split or another Reader holds it too).
  void Close() {
    reader_.reset();
    dataset_.reset();
  }

  nanobind::bytes Read(int64_t index) const;
  nanobind::typed<nanobind::list, nanobind::bytes> ReadBatch(const std::vector<int64_t>& indices) const;

 private:
  // Opens the shards (dataset_'s split's, or source_.path's).
  void Open();
  // The open reader, after checking that this process opened it and that it is not closed.
  std::shared_ptr<const ffr::Reader> Get() const;

  Source source_;
  Options options_;
  pid_t pid_;
  std::shared_ptr<const Dataset> dataset_;  // a split's, held for its lock; null for shards
  std::string manifest_crc_;
  std::shared_ptr<const ffr::Reader> reader_;
};

void BindReader(nanobind::module_& m);

}  // namespace ffyolo::python
