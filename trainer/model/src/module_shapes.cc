#include "ffyolo/module_shapes.h"

namespace ffyolo {

namespace {

// int(c2 * e): Python truncates the product toward zero.
int64_t HiddenWidth(int64_t c2, double e) { return static_cast<int64_t>(static_cast<double>(c2) * e); }

double ConvParameters(const ConvArgs& a) {
  const auto d = [](int64_t v) { return static_cast<double>(v); };
  return d(a.c2) * d(a.c1 / a.g) * d(a.k) * d(a.k) + 2 * d(a.c2);
}

double BottleneckParameters(const BottleneckArgs& args) {
  const BottleneckLayers layers = LayersOf(args);
  return ConvParameters(layers.cv1) + ConvParameters(layers.cv2);
}

}  // namespace

ConvArgs PointwiseConv(int64_t c1, int64_t c2) {
  ConvArgs args;
  args.c1 = c1, args.c2 = c2;
  return args;
}

BottleneckLayers LayersOf(const BottleneckArgs& args) {
  const int64_t hidden = HiddenWidth(args.c2, args.e);
  BottleneckLayers layers;
  layers.cv1 = PointwiseConv(args.c1, hidden);
  layers.cv2.c1 = hidden, layers.cv2.c2 = args.c2, layers.cv2.k = 3, layers.cv2.g = args.g;
  return layers;
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

SPPFLayers LayersOf(const SPPFArgs& args) {
  const int64_t hidden = args.c1 / 2;
  return {PointwiseConv(args.c1, hidden), PointwiseConv(4 * hidden, args.c2)};
}

double ParameterCount(const LayerArgs& args) {
  return std::visit(ForEachModule{
                        [](const ConvArgs& a) { return ConvParameters(a); },
                        [](const BottleneckArgs& a) { return BottleneckParameters(a); },
                        [](const C3Args& a) {
                          const C3Layers layers = LayersOf(a);
                          return ConvParameters(layers.cv1) + ConvParameters(layers.cv2) +
                                 ConvParameters(layers.cv3) + static_cast<double>(a.n) * BottleneckParameters(layers.m);
                        },
                        [](const SPPFArgs& a) {
                          const SPPFLayers layers = LayersOf(a);
                          return ConvParameters(layers.cv1) + ConvParameters(layers.cv2);
                        },
                        [](const ConcatArgs&) { return 0.0; },
                        [](const UpsampleArgs&) { return 0.0; },
                        [](const DetectArgs& a) {
                          const double outputs =
                              static_cast<double>(a.anchors.at(0).size() / 2) * static_cast<double>(a.nc + 5);
                          double count = 0;
                          for (int64_t c : a.ch) count += (static_cast<double>(c) + 1) * outputs;  // weight and bias
                          return count;
                        },
                    },
                    args);
}

}  // namespace ffyolo
