// How a failed ffr::Status reaches Python: the one place where a status code picks the exception
// type, so that every binding raises alike (FileNotFoundError for a missing path, ValueError for a
// bad option, ffyolo.CorruptionError for damaged data, ...), with the status' message, which names
// the file and the sample, whatever bytes the file's name holds.
#pragma once
#include <string>

#include <nanobind/nanobind.h>

#include "ffr/status.h"

namespace ffyolo::python {

// Adds ffyolo.CorruptionError (a ValueError) to the module.
void RegisterErrors(nanobind::module_& m);

// Text for Python made by the C++ side (a message, a repr, a report), which may hold a path that is not
// UTF-8: its other bytes are written as \xNN (backslashreplace) rather than failing to decode. Needs the GIL.
nanobind::str Text(const std::string& text);

// Raises `type` (PyExc_ValueError, ...) with `message` as Text. Needs the GIL.
[[noreturn]] void Raise(PyObject* type, const std::string& message);

// Raises the Python exception of `status`, which must have failed. Needs the GIL.
[[noreturn]] void Raise(const ffr::Status& status);

inline void ThrowIfError(const ffr::Status& status) {
  if (!status.ok()) Raise(status);
}

// Raises what a failed Dataset::ResolveSplit means in Python: a split that is not there is a KeyError,
// as a missing key of a dict; a split named twice, or several that could be the default, ValueError.
[[noreturn]] void RaiseSplitError(const ffr::Status& status);

}  // namespace ffyolo::python
