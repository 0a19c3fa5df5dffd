#include <vector>

#include "ffyolo/kernels/bn_silu_kernels.h"
#include "ffyolo/kernels/bn_silu_math.h"

namespace ffyolo::kernels {

template <typename T>
void BnSiluForwardHost(const T* x, T* y, int64_t rows, int64_t channels, const T* weight, const T* bias,
                       T* running_mean, T* running_var, double momentum, double eps, T* stats) {
  std::vector<double> sum(channels), sum_squares(channels);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < channels; ++c) {
      const double d = static_cast<double>(x[r * channels + c]) - static_cast<double>(x[c]);
      sum[c] += d;
      sum_squares[c] += d * d;
    }
  for (int64_t c = 0; c < channels; ++c) {
    const ChannelStats s = StatsFromShiftedSums(static_cast<double>(x[c]), sum[c], sum_squares[c], rows, eps);
    UpdateRunningStats(s, rows, momentum, running_mean + c, running_var + c);
    const ChannelAffine affine = AffineFromStats(s, static_cast<double>(weight[c]), static_cast<double>(bias[c]));
    stats[c] = static_cast<T>(s.mean);
    stats[channels + c] = static_cast<T>(s.invstd);
    stats[2 * channels + c] = static_cast<T>(affine.scale);
    stats[3 * channels + c] = static_cast<T>(affine.shift);
  }
  const T* scale = stats + 2 * channels;
  const T* shift = stats + 3 * channels;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < channels; ++c) y[r * channels + c] = BnSiluForward(x[r * channels + c], scale[c], shift[c]);
}

template <typename T>
void BnSiluBackwardHost(const T* x, const T* dy, T* dx, int64_t rows, int64_t channels, const T* weight,
                        const T* stats, T* dweight, T* dbias) {
  const T* mean = stats;
  const T* invstd = stats + channels;
  const T* scale = stats + 2 * channels;
  const T* shift = stats + 3 * channels;
  std::vector<double> sum_dz(channels), sum_dz_centred(channels);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t i = r * channels + c;
      const T dz = PreActivationGrad(dy[i], x[i], scale[c], shift[c]);
      sum_dz[c] += static_cast<double>(dz);
      sum_dz_centred[c] += static_cast<double>(dz * (x[i] - mean[c]));
    }
  std::vector<ChannelGrads> g(channels);
  for (int64_t c = 0; c < channels; ++c) {
    g[c] = GradsFromSums(sum_dz[c], sum_dz_centred[c], rows, static_cast<double>(weight[c]),
                         static_cast<double>(invstd[c]));
    dbias[c] = static_cast<T>(sum_dz[c]);
    dweight[c] = static_cast<T>(g[c].dweight);
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t i = r * channels + c;
      const T dz = PreActivationGrad(dy[i], x[i], scale[c], shift[c]);
      dx[i] = BnSiluInputGrad(dz, x[i], mean[c], static_cast<T>(g[c].k), static_cast<T>(g[c].a), static_cast<T>(g[c].b));
    }
}

template void BnSiluForwardHost<float>(const float*, float*, int64_t, int64_t, const float*, const float*, float*,
                                       float*, double, double, float*);
template void BnSiluForwardHost<double>(const double*, double*, int64_t, int64_t, const double*, const double*,
                                        double*, double*, double, double, double*);
template void BnSiluBackwardHost<float>(const float*, const float*, float*, int64_t, int64_t, const float*,
                                        const float*, float*, float*);
template void BnSiluBackwardHost<double>(const double*, const double*, double*, int64_t, int64_t, const double*,
                                         const double*, double*, double*);

}  // namespace ffyolo::kernels
