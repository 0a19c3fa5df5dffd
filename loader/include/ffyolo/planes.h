// The batch's image layout: RGB planes (CHW) from OpenCV's interleaved BGR (HWC).
#pragma once

#include <cstdint>

#include <opencv2/core.hpp>

namespace ffyolo {

// Writes `bgr` (CV_8UC3) as 3 planes R, G, B of rows x cols bytes each.
void WriteRgbPlanes(const cv::Mat& bgr, uint8_t* dst);

}  // namespace ffyolo
