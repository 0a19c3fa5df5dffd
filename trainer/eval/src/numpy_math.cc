#include "ffyolo/numpy_math.h"

#include <algorithm>

namespace ffyolo {

std::vector<double> NumpyLinspace(double start, double stop, int num) {
  std::vector<double> values;
  if (num <= 0) return values;
  values.resize(num);
  if (num == 1) {
    values[0] = start;
    return values;
  }
  const double step = (stop - start) / (num - 1);
  for (int i = 0; i < num; ++i) {
    const double scaled = i * step;  // NumPy scales, then shifts: two roundings
    values[i] = scaled + start;
  }
  values[num - 1] = stop;
  return values;
}

double NumpyInterp(double x, const std::vector<double>& xp, const std::vector<double>& fp,
                   double left, double right) {
  const size_t n = xp.size();
  if (x > xp[n - 1]) return right;
  if (x < xp[0]) return left;
  // NumPy's binary search yields the last j with xp[j] <= x.
  const size_t j = static_cast<size_t>(std::upper_bound(xp.begin(), xp.end(), x) - xp.begin()) - 1;
  if (j == n - 1 || xp[j] == x) return fp[j];
  const double slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
  return slope * (x - xp[j]) + fp[j];
}

double NumpyPairwiseSum(const double* values, size_t n) {
  constexpr size_t kBlock = 128;
  if (n < 8) {
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i) sum += values[i];
    return sum;
  }
  if (n <= kBlock) {
    double r[8];
    for (int k = 0; k < 8; ++k) r[k] = values[k];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (int k = 0; k < 8; ++k) r[k] += values[i + k];
    }
    double sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) sum += values[i];
    return sum;
  }
  size_t half = n / 2;
  half -= half % 8;
  return NumpyPairwiseSum(values, half) + NumpyPairwiseSum(values + half, n - half);
}

}  // namespace ffyolo
