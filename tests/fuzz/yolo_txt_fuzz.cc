// ScanSource on a YOLO layout of one image made from any bytes: up to the
// first NUL they are the data YAML (names, nc, category_ids), after it the
// image's label file; without a NUL they are the label file and there is no
// data YAML (classes are then inferred from the labels).
#include <cstdint>
#include <string_view>

#include "ffyolo/source.h"
#include "temp_tree.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const TempTree tree("yolo_txt_fuzz", {"images/val", "labels/val"});
  // The scan lists the images without reading them: an empty one will do.
  static const bool image_written = (tree.Write("images/val/000000000009.jpg", ""), true);
  (void)image_written;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const size_t nul = bytes.find('\0');
  if (nul == std::string_view::npos) {
    tree.Remove("data.yaml");
    tree.Write("labels/val/000000000009.txt", bytes);
  } else {
    tree.Write("data.yaml", bytes.substr(0, nul));
    tree.Write("labels/val/000000000009.txt", bytes.substr(nul + 1));
  }
  ffyolo::ScanOptions options;
  options.layout = ffyolo::SourceLayout::kYoloTxt;
  ffyolo::SourceDataset dataset;
  ffyolo::ScanSource(tree.root(), options, &dataset);
  return 0;
}
