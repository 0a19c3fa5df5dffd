// Scratch images over byte buffers that only grow, so that steady state
// allocates nothing once the largest image has been seen.
#pragma once

#include <cstdint>
#include <vector>

#include <opencv2/core.hpp>

namespace ffyolo {

// A CV_8UC3 header of rows x cols over `buffer`, grown when needed.
inline cv::Mat ImageView(std::vector<uint8_t>* buffer, int rows, int cols) {
  const size_t bytes = static_cast<size_t>(rows) * cols * 3;
  if (buffer->size() < bytes) buffer->resize(bytes);
  return cv::Mat(rows, cols, CV_8UC3, buffer->data());
}

}  // namespace ffyolo
