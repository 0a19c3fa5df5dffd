// ffyolo.Dataset and ffyolo.Split: a packed dataset folder (docs/format.md) through its manifest,
// and one split's label index as Ultralytics' datasets hold theirs (labels, shapes, files), with a
// Reader over the split's shards.
#pragma once
#include <nanobind/nanobind.h>

namespace ffyolo::python {

void BindDataset(nanobind::module_& m);

}  // namespace ffyolo::python
