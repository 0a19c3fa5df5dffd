// How a failed ffr::Status reaches Python: the one place where a status code picks the exception
// type, so that every binding raises alike (FileNotFoundError for a missing path, ValueError for a
// bad option, ffyolo.CorruptionError for damaged data, ...), with the status' message, which names
// the file and the sample.
#pragma once
#include <nanobind/nanobind.h>

#include "ffr/status.h"

namespace ffyolo::python {

// Adds ffyolo.CorruptionError (a ValueError) to the module.
void RegisterErrors(nanobind::module_& m);

// Raises the Python exception of `status`, which must have failed. Needs the GIL.
[[noreturn]] void Raise(const ffr::Status& status);

inline void ThrowIfError(const ffr::Status& status) {
  if (!status.ok()) Raise(status);
}

// Raises what a failed Dataset::ResolveSplit means in Python: a split that is not there is a KeyError,
// as a missing key of a dict; a split named twice, or several that could be the default, ValueError.
[[noreturn]] void RaiseSplitError(const ffr::Status& status);

}  // namespace ffyolo::python
