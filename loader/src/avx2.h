// The loader's AVX2 kernels (the warp, the HSV pass) are compiled with
// target("avx2") and chosen at run time, so the build stays plain x86-64.
#ifndef FFYOLO_LOADER_SRC_AVX2_H_
#define FFYOLO_LOADER_SRC_AVX2_H_

#include <opencv2/core/utility.hpp>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define FFYOLO_HAVE_AVX2 1
#endif

namespace ffyolo {

// Whether OpenCV runs its AVX2 build, which decides the loader's kernels too:
// the HSV pass is bit-exact only when it follows the build OpenCV dispatches
// to, and one answer for all kernels lets OPENCV_CPU_DISABLE=AVX2 turn them
// all off. The kernels themselves exist only where FFYOLO_HAVE_AVX2 is set.
inline bool OpenCvAvx2() {
  static const bool avx2 = cv::checkHardwareSupport(CV_CPU_AVX2);
  return avx2;
}

}  // namespace ffyolo

#endif  // FFYOLO_LOADER_SRC_AVX2_H_
