// ScanSource on a COCO layout whose annotations/instances_val.json is any
// bytes: nlohmann's JSON parser with the packer's streaming collector, then
// the checks of images, annotations and categories.
#include <cstdint>
#include <string_view>

#include "ffyolo/source.h"
#include "temp_tree.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const TempTree tree("coco_json_fuzz", {"annotations", "images/val"});
  tree.Write("annotations/instances_val.json", std::string_view(reinterpret_cast<const char*>(data), size));
  ffyolo::ScanOptions options;
  options.layout = ffyolo::SourceLayout::kCocoJson;
  ffyolo::SourceDataset dataset;
  ffyolo::ScanSource(tree.root(), options, &dataset);
  return 0;
}
