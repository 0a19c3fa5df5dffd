// ffyolo.Loader (loader.cc): the C++ loader's batches as numpy arrays in YOLOv5's collate format.
#pragma once
#include <nanobind/nanobind.h>

namespace ffyolo::python {

void BindLoader(nanobind::module_& m);

// Stops the workers of every loader there is, for the interpreter's exit: a daemon thread parked there may
// hold one open for good, and its workers would otherwise run on into the process's static destructors
// (OpenCV's among them). A Loader used after this raises.
void StopEveryLoader();

}  // namespace ffyolo::python
