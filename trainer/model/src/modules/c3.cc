#include "ffyolo/modules/c3.h"

#include "ffyolo/model_config.h"
#include "ffyolo/row_parser.h"

namespace ffyolo {

ffr::Status ParseArgs(const RowParser& row, LayerConfig* layer, C3Args* a) {
  FFR_RETURN_IF_ERROR(row.InOutChannels(*layer, &a->c1, &a->c2));
  a->n = layer->repeats;
  FFR_RETURN_IF_ERROR(ParseShortcutArgs(row, C3Args::kName, a->c2, &a->shortcut, &a->g, &a->e));
  layer->copies = 1;  // C3 takes n itself
  row.ConvFamilyText(layer, a->c1, a->c2, true);
  return ffr::Status::OK();
}

C3Layers LayersOf(const C3Args& args) {
  const int64_t hidden = HiddenWidth(args.c2, args.e);
  C3Layers layers;
  layers.cv1 = PointwiseConv(args.c1, hidden);
  layers.cv2 = PointwiseConv(args.c1, hidden);
  layers.cv3 = PointwiseConv(2 * hidden, args.c2);
  layers.m.c1 = layers.m.c2 = hidden, layers.m.shortcut = args.shortcut, layers.m.g = args.g, layers.m.e = 1.0;
  return layers;
}

double Parameters(const C3Args& a) {
  const C3Layers layers = LayersOf(a);
  return Parameters(layers.cv1) + Parameters(layers.cv2) + Parameters(layers.cv3) +
         static_cast<double>(a.n) * Parameters(layers.m);
}

}  // namespace ffyolo
