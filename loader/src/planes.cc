#include "ffyolo/planes.h"

#include <vector>

namespace ffyolo {

void WriteRgbPlanes(const cv::Mat& bgr, uint8_t* dst) {
  const size_t plane = static_cast<size_t>(bgr.rows) * bgr.cols;
  // cv::split writes channel 0 (B) to the last plane: BGR -> RGB and HWC -> CHW in one pass.
  std::vector<cv::Mat> planes{cv::Mat(bgr.rows, bgr.cols, CV_8UC1, dst + 2 * plane),
                              cv::Mat(bgr.rows, bgr.cols, CV_8UC1, dst + plane),
                              cv::Mat(bgr.rows, bgr.cols, CV_8UC1, dst)};
  cv::split(bgr, planes);
}

}  // namespace ffyolo
