// Path arguments of the bindings: a str, bytes or os.PathLike, as Python's own file functions take,
// in the file system's encoding. Not nanobind's std::filesystem::path caster: the extension makes
// no std::filesystem calls (ffyolo/output/path_overlap.h says why).
#ifndef FFYOLO_PYTHON_PATH_ARG_H_
#define FFYOLO_PYTHON_PATH_ARG_H_

#include <cstdint>
#include <string>

#include <nanobind/nanobind.h>

namespace ffyolo::python {

struct PathArg {
  std::string path;
};

}  // namespace ffyolo::python

namespace nanobind::detail {

template <>
struct type_caster<ffyolo::python::PathArg> {
  NB_TYPE_CASTER(ffyolo::python::PathArg, const_name("str | os.PathLike"))

  bool from_python(handle src, uint32_t, cleanup_list*) noexcept {
    PyObject* bytes = nullptr;
    if (!PyUnicode_FSConverter(src.ptr(), &bytes)) {  // calls os.fspath; refuses embedded NULs
      PyErr_Clear();
      return false;
    }
    value.path.assign(PyBytes_AS_STRING(bytes), static_cast<size_t>(PyBytes_GET_SIZE(bytes)));
    Py_DECREF(bytes);
    return true;
  }

  static handle from_cpp(const ffyolo::python::PathArg& arg, rv_policy, cleanup_list*) noexcept {
    return PyUnicode_DecodeFSDefaultAndSize(arg.path.data(), static_cast<Py_ssize_t>(arg.path.size()));
  }
};

}  // namespace nanobind::detail

#endif  // FFYOLO_PYTHON_PATH_ARG_H_
