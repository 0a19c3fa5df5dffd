// The pickles inside a checkpoint (data.pkl, constants.pkl, the code's
// .debug_pkl files and a torch.save file's data.pkl).
//
// LibTorch's unpickler trusts what it reads: a memo index makes it allocate
// that many slots (checkpoint_fuzz: 27 GB from one LONG_BINPUT), a storage's
// element count is not compared with its record, a tensor's sizes and strides
// are not compared with its storage (copying such a tensor reads past the
// record), and a dict of an odd number of items reads past its stack. Correct
// CRCs let all of that through, so the checkpoint reader runs this check
// first: it follows the pickle as LibTorch's unpickler would, tracking only
// what those checks need.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ffr/status.h"

namespace ffyolo {

// The size of the archive's record `name` (as the zip names it); nullopt when
// there is none.
using RecordSize = std::function<std::optional<uint64_t>(const std::string& name)>;

// OK when `pickle`, the archive's entry `name`, is a protocol-2 pickle of only
// the opcodes LibTorch's unpickler reads, each argument within the bytes, memo
// indices given in order, every container built from items above its mark (a
// dict from pairs), every call made to a function the pickle named, and every
// tensor within its storage and every storage within its record
// (`<name without .pkl>/<key>`). Else Corruption naming `name`, the byte
// offset and what is wrong there.
ffr::Status CheckPickle(std::string_view pickle, const std::string& name, const RecordSize& record_size);

// A storage class a checkpoint may name (torch.FloatStorage, ...), the number
// LibTorch's unpickler gives its element type (c10::ScalarType) and the bytes
// of one element. Any other storage is refused.
struct StorageType {
  std::string_view class_name;
  int64_t scalar_type;
  int64_t element_bytes;
};
const std::vector<StorageType>& StorageTypes();

}  // namespace ffyolo
