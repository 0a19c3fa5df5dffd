#include "errors.h"

namespace nb = nanobind;

namespace ffyolo::python {
namespace {

// Owned by the module (its attribute CorruptionError), which outlives every call that raises it.
PyObject* corruption_error = nullptr;

PyObject* ExceptionType(ffr::Status::Code code) {
  using Code = ffr::Status::Code;
  switch (code) {
    case Code::kNotFound: return PyExc_FileNotFoundError;
    case Code::kCorruption: return corruption_error;
    case Code::kInvalidArgument: return PyExc_ValueError;
    case Code::kAlreadyExists: return PyExc_FileExistsError;
    // What the file system or kernel cannot do (O_DIRECT on tmpfs) is an OSError, as a failed read is.
    case Code::kIOError:
    case Code::kNotSupported: return PyExc_OSError;
    case Code::kAborted:
    case Code::kOk: break;
  }
  return PyExc_RuntimeError;
}

}  // namespace

void RegisterErrors(nb::module_& m) {
  corruption_error = PyErr_NewExceptionWithDoc(
      "ffyolo.CorruptionError",
      "Stored data failed a check: a sample's CRC-32, a shard header, a label index or a manifest.\n\n"
      "A ValueError; its message names the file and the sample.",
      PyExc_ValueError, nullptr);
  if (corruption_error == nullptr) throw nb::python_error();
  m.attr("CorruptionError") = nb::steal(corruption_error);
}

nb::str Text(const std::string& text) {
  PyObject* str = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace");
  if (str == nullptr) throw nb::python_error();
  return nb::steal<nb::str>(str);
}

void Raise(PyObject* type, const std::string& message) {
  PyErr_SetObject(type, Text(message).ptr());
  throw nb::python_error();
}

void Raise(const ffr::Status& status) { Raise(ExceptionType(status.code()), status.message()); }

void RaiseSplitError(const ffr::Status& status) {
  Raise(status.IsNotFound() ? PyExc_KeyError : ExceptionType(status.code()), status.message());
}

}  // namespace ffyolo::python
