#include "ffyolo/modules/conv.h"

#include "ffyolo/model_config.h"
#include "ffyolo/row_parser.h"

namespace ffyolo {

ffr::Status ParseArgs(const RowParser& row, LayerConfig* layer, ConvArgs* a) {
  FFR_RETURN_IF_ERROR(row.InOutChannels(*layer, &a->c1, &a->c2));
  FFR_RETURN_IF_ERROR(row.MaxArgs(7, "Conv(c2, k, s, p, g, d, act)"));
  FFR_RETURN_IF_ERROR(row.IntArg(1, "k", &a->k));
  FFR_RETURN_IF_ERROR(row.IntArg(2, "s", &a->s));
  const YAML::Node& args = row.args();
  if (args.size() > 3 && !IsNone(args[3]) && (!ReadInt(args[3], &a->p) || a->p < 0))
    return row.Error("args[3] (p) must be None or an integer >= 0");
  FFR_RETURN_IF_ERROR(row.IntArg(4, "g", &a->g));
  FFR_RETURN_IF_ERROR(row.IntArg(5, "d", &a->d));
  FFR_RETURN_IF_ERROR(row.BoolArg(6, "act", &a->act));
  if (a->k < 1 || a->s < 1 || a->g < 1 || a->d < 1 || a->c1 % a->g != 0 || a->c2 % a->g != 0)
    return row.Error("Conv needs k, s, g, d >= 1 and channels divisible by g");
  row.ConvFamilyText(layer, a->c1, a->c2, false);
  return ffr::Status::OK();
}

double Parameters(const ConvArgs& a) {
  const auto d = [](int64_t v) { return static_cast<double>(v); };
  return d(a.c2) * d(a.c1 / a.g) * d(a.k) * d(a.k) + 2 * d(a.c2);
}

ConvArgs PointwiseConv(int64_t c1, int64_t c2) {
  ConvArgs args;
  args.c1 = c1, args.c2 = c2;
  return args;
}

}  // namespace ffyolo
