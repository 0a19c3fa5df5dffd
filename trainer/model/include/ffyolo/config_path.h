// Where the configs shipped with ffyolo (configs/models, configs/hyps) are found,
// so that `--cfg yolov5s` and `--hyp hyp.scratch-high` work from any folder.
#pragma once

#include <string>

namespace ffyolo {

// `name` when it is an existing file or a path (it has a '/'); else the shipped
// <kind>/<name> or <kind>/<name>.yaml ("models", "hyps"); else `name` itself,
// so that opening it fails with what was asked for. Shipped configs are in
// <exe dir>/../share/ffyolo/configs for an installed binary, and in the source
// tree's configs/ for one run from the build tree.
std::string ResolveConfig(const std::string& name, const std::string& kind);

}  // namespace ffyolo
