// Path arguments of the bindings: a str, bytes or os.PathLike, as Python's own file functions take,
// in the file system's encoding; and paths handed back as they came (bytes or str), as os's functions
// hand them back. Not nanobind's std::filesystem::path caster: the extension makes no std::filesystem
// calls (ffyolo/output/path_overlap.h says why).
#ifndef FFYOLO_PYTHON_PATH_ARG_H_
#define FFYOLO_PYTHON_PATH_ARG_H_

#include <cstdint>
#include <string>

#include <nanobind/nanobind.h>

namespace ffyolo::python {

struct PathArg {
  std::string path;    // in the file system's encoding, as the C++ libraries take it
  bool bytes = false;  // given as bytes (or an os.PathLike of bytes)
};

// A path for Python, as Python's os functions give one back: bytes when it came as bytes, else a str
// decoded as os.fsdecode does (surrogateescape), so that any path round-trips, UTF-8 or not. New
// reference, or null with the error set.
inline PyObject* NewPath(const std::string& path, bool bytes) {
  const auto size = static_cast<Py_ssize_t>(path.size());
  return bytes ? PyBytes_FromStringAndSize(path.data(), size) : PyUnicode_DecodeFSDefaultAndSize(path.data(), size);
}

inline nanobind::object PathObject(const std::string& path, bool bytes) {
  PyObject* object = NewPath(path, bytes);
  if (object == nullptr) throw nanobind::python_error();
  return nanobind::steal(object);
}

}  // namespace ffyolo::python

namespace nanobind::detail {

template <>
struct type_caster<ffyolo::python::PathArg> {
  NB_TYPE_CASTER(ffyolo::python::PathArg, io_name("str | bytes | os.PathLike", "str | bytes"))

  bool from_python(handle src, uint32_t, cleanup_list*) noexcept {
    PyObject* fspath = PyOS_FSPath(src.ptr());
    PyObject* bytes = nullptr;
    if (fspath == nullptr || !PyUnicode_FSConverter(fspath, &bytes)) {  // refuses embedded NULs
      Py_XDECREF(fspath);
      PyErr_Clear();
      return false;
    }
    value.bytes = PyBytes_Check(fspath);
    Py_DECREF(fspath);
    value.path.assign(PyBytes_AS_STRING(bytes), static_cast<size_t>(PyBytes_GET_SIZE(bytes)));
    Py_DECREF(bytes);
    return true;
  }

  static handle from_cpp(const ffyolo::python::PathArg& arg, rv_policy, cleanup_list*) noexcept {
    return ffyolo::python::NewPath(arg.path, arg.bytes);
  }
};

}  // namespace nanobind::detail

#endif  // FFYOLO_PYTHON_PATH_ARG_H_
