// The few NumPy numeric routines whose exact arithmetic the metrics depend on.
// pycocotools and Ultralytics compute with NumPy; matching their numbers to the
// last bits needs the same sample points, interpolation rule and summation order.
#pragma once

#include <cstddef>
#include <vector>

namespace ffyolo {

// np.linspace(start, stop, num): start + i * ((stop - start) / (num - 1)), the
// last value exactly `stop`. These are the IoU and recall thresholds; a
// comparison such as "recall >= 0.01 * i" depends on them bit for bit.
std::vector<double> NumpyLinspace(double start, double stop, int num);

// np.interp(x, xp, fp, left, right) for ascending xp (equal entries allowed)
// and non-empty xp, fp of equal size: `left` below xp.front(), `right` above
// xp.back(), fp of the last xp entry equal to x, otherwise linear between the
// neighbours. NumPy's defaults are left = fp.front() and right = fp.back().
double NumpyInterp(double x, const std::vector<double>& xp, const std::vector<double>& fp,
                   double left, double right);

// np.sum of a contiguous float64 array: NumPy's pairwise summation (blocks of
// at most 128 values summed with 8 interleaved accumulators).
double NumpyPairwiseSum(const double* values, size_t n);

}  // namespace ffyolo
