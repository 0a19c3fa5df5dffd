#include "ffyolo/random.h"

#include <utility>

namespace ffyolo {

double SampleRandom::BetaSymmetric(int a) {
  // Order statistics of uniforms: the a-th smallest of 2a-1 draws is Beta(a, a).
  const int n = 2 * a - 1;
  double values[127];
  const int m = n < 127 ? n : 127;
  for (int i = 0; i < m; ++i) values[i] = Uniform();
  int rank = a - 1 < m ? a - 1 : m - 1;
  // Partial selection sort: cheap for the small n used here.
  for (int i = 0; i <= rank; ++i)
    for (int j = i + 1; j < m; ++j)
      if (values[j] < values[i]) std::swap(values[i], values[j]);
  return values[rank];
}

}  // namespace ffyolo
