#include "ffyolo/modules/bottleneck.h"

#include <string>

#include "ffyolo/model_config.h"
#include "ffyolo/row_parser.h"

namespace ffyolo {

ffr::Status ParseArgs(const RowParser& row, LayerConfig* layer, BottleneckArgs* a) {
  FFR_RETURN_IF_ERROR(row.InOutChannels(*layer, &a->c1, &a->c2));
  FFR_RETURN_IF_ERROR(ParseShortcutArgs(row, BottleneckArgs::kName, a->c2, &a->shortcut, &a->g, &a->e));
  row.ConvFamilyText(layer, a->c1, a->c2, false);
  return ffr::Status::OK();
}

ffr::Status ParseShortcutArgs(const RowParser& row, const char* module, int64_t c2, bool* shortcut, int64_t* g,
                              double* e) {
  FFR_RETURN_IF_ERROR(row.MaxArgs(4, (std::string(module) + "(c2, shortcut, g, e)").c_str()));
  FFR_RETURN_IF_ERROR(row.BoolArg(1, "shortcut", shortcut));
  FFR_RETURN_IF_ERROR(row.IntArg(2, "g", g));
  FFR_RETURN_IF_ERROR(row.DoubleArg(3, "e", e));
  if (!HiddenWidthOk(c2, *g, *e))
    return row.Error(std::string(module) + " needs g >= 1, e > 0 and int(c2*e) >= 1 divisible by g");
  return ffr::Status::OK();
}

BottleneckLayers LayersOf(const BottleneckArgs& args) {
  const int64_t hidden = HiddenWidth(args.c2, args.e);
  BottleneckLayers layers;
  layers.cv1 = PointwiseConv(args.c1, hidden);
  layers.cv2.c1 = hidden, layers.cv2.c2 = args.c2, layers.cv2.k = 3, layers.cv2.g = args.g;
  return layers;
}

double Parameters(const BottleneckArgs& a) {
  const BottleneckLayers layers = LayersOf(a);
  return Parameters(layers.cv1) + Parameters(layers.cv2);
}

int64_t HiddenWidth(int64_t c2, double e) { return static_cast<int64_t>(static_cast<double>(c2) * e); }

bool HiddenWidthOk(int64_t c2, int64_t g, double e) {
  const double hidden = static_cast<double>(c2) * e;
  return g >= 1 && e > 0 && hidden >= 1 && hidden <= static_cast<double>(kMaxChannels) &&
         static_cast<int64_t>(hidden) % g == 0;
}

}  // namespace ffyolo
