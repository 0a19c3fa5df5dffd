// ScanSource on a COCO layout whose annotations/instances_val.json is any
// bytes: the packer's JsonScanner walking the document, then the checks of
// images, annotations and categories. The same bytes also go through
// JsonScanner as a plain validator, whose verdict must be nlohmann::json's
// (the parser it replaced), but for a NUL byte (below): a disagreement aborts.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "ffyolo/source.h"
#include "json_scanner.h"
#include "temp_tree.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static const TempTree tree("coco_json_fuzz", {"annotations", "images/val"});
  tree.Write("annotations/instances_val.json", text);
  ffyolo::ScanOptions options;
  options.layout = ffyolo::SourceLayout::kCocoJson;
  ffyolo::SourceDataset dataset;
  ffyolo::ScanSource(tree.root(), options, &dataset);

  // Small chunks split tokens between reads, as a large file does at 4 MB.
  ffyolo::source_internal::JsonScanner json("input", text, 7);
  json.SkipValue();
  json.Finish();
  // nlohmann's lexer takes a NUL byte for the end of the input (as in a C string), so "8\0x" is JSON to it.
  // RFC 8259 has no raw NUL anywhere: outside a string it is no token, inside one an unescaped control character.
  const bool valid = text.find('\0') == std::string_view::npos && nlohmann::json::accept(text);
  if (json.ok() != valid) {
    std::fprintf(stderr, "JsonScanner %s what nlohmann::json %s: %s\n", json.ok() ? "accepts" : "rejects",
                 json.ok() ? "rejects" : "accepts", json.status().ToString().c_str());
    std::abort();
  }
  return 0;
}
