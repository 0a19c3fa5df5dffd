// ffyolo.Loader (loader.cc): the C++ loader's batches as numpy arrays in YOLOv5's collate format.
#pragma once
#include <nanobind/nanobind.h>

namespace ffyolo::python {

void BindLoader(nanobind::module_& m);

}  // namespace ffyolo::python
