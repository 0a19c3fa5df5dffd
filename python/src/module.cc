// The extension module ffyolo._ffyolo; the package ffyolo (python/ffyolo/) re-exports it.
#include <nanobind/nanobind.h>

#include "dataset.h"
#include "errors.h"
#include "gil.h"
#include "loader.h"
#include "reader.h"

NB_MODULE(_ffyolo, m) {
  m.doc() = "ffyolo's C++ reader, datasets and loader; use them through the package ffyolo.";
  ffyolo::python::ShutGilGateAtExit(&ffyolo::python::StopEveryLoader);
  ffyolo::python::RegisterErrors(m);
  ffyolo::python::BindReader(m);
  ffyolo::python::BindDataset(m);
  ffyolo::python::BindLoader(m);
}
