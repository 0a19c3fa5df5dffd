#include "ffyolo/batch_grid.h"

#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

#include "ffr/env.h"
#include "ffyolo/loader.h"

namespace ffyolo {
namespace {

// Ultralytics' palette (hex), so that grids look familiar.
const char* kPalette[] = {"FF3838", "FF9D97", "FF701F", "FFB21D", "CFD231", "48F90A", "92CC17",
                          "3DDB86", "1A9334", "00D4BB", "2C99A8", "00C2FF", "344593", "6473FF",
                          "0018EC", "8438FF", "520085", "CB38FF", "FF95C8", "FF37C7"};

}  // namespace

cv::Scalar ClassColor(int cls) {
  const char* hex = kPalette[cls % (sizeof(kPalette) / sizeof(kPalette[0]))];
  const int v = static_cast<int>(std::strtol(hex, nullptr, 16));
  return cv::Scalar(v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff);  // BGR
}

void DrawBoxLabel(cv::Mat* image, cv::Point p1, cv::Point p2, const cv::Scalar& color, const std::string& label,
                  int line_width, double font_scale) {
  cv::rectangle(*image, p1, p2, color, line_width, cv::LINE_AA);
  if (label.empty()) return;
  const int thickness = std::max(line_width - 1, 1);
  int baseline = 0;
  const cv::Size ts = cv::getTextSize(label, cv::FONT_HERSHEY_SIMPLEX, font_scale, thickness, &baseline);
  const bool outside = p1.y - ts.height >= 3;
  const cv::Point corner(p1.x + ts.width, outside ? p1.y - ts.height - 3 : p1.y + ts.height + 3);
  cv::rectangle(*image, p1, corner, color, cv::FILLED, cv::LINE_AA);
  cv::putText(*image, label, cv::Point(p1.x, outside ? p1.y - 2 : p1.y + ts.height + 2), cv::FONT_HERSHEY_SIMPLEX,
              font_scale, cv::Scalar(255, 255, 255), thickness, cv::LINE_AA);
}

cv::Mat RenderBatchGrid(const Batch& batch, const GridOptions& options) {
  const int n = std::min(batch.size, options.max_images);
  const int cols = std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n)))));
  const int rows = std::max(1, (n + cols - 1) / cols);
  const double scale =
      std::min(1.0, static_cast<double>(options.max_side) / std::max(cols * batch.width, rows * batch.height));
  const int w = std::max(1, static_cast<int>(batch.width * scale));
  const int h = std::max(1, static_cast<int>(batch.height * scale));
  cv::Mat grid(rows * h, cols * w, CV_8UC3, cv::Scalar(255, 255, 255));
  const size_t plane = static_cast<size_t>(batch.height) * batch.width;
  cv::Mat hwc(batch.height, batch.width, CV_8UC3);
  for (int i = 0; i < n; ++i) {
    const uint8_t* img = batch.images + 3 * plane * i;
    // RGB planes -> BGR interleaved.
    std::vector<cv::Mat> planes{cv::Mat(batch.height, batch.width, CV_8UC1, const_cast<uint8_t*>(img + 2 * plane)),
                                cv::Mat(batch.height, batch.width, CV_8UC1, const_cast<uint8_t*>(img + plane)),
                                cv::Mat(batch.height, batch.width, CV_8UC1, const_cast<uint8_t*>(img))};
    cv::merge(planes, hwc);
    cv::Mat cell = grid(cv::Rect((i % cols) * w, (i / cols) * h, w, h));
    cv::resize(hwc, cell, cell.size(), 0, 0, cv::INTER_AREA);
    cv::rectangle(grid, cv::Rect((i % cols) * w, (i / cols) * h, w, h), cv::Scalar(255, 255, 255), 2);
    cv::putText(cell, std::to_string(i), cv::Point(4, 14), cv::FONT_HERSHEY_SIMPLEX, 0.45, cv::Scalar(220, 220, 220),
                1, cv::LINE_AA);
  }
  for (size_t t = 0; t < batch.num_targets(); ++t) {
    const float* row = &batch.targets[6 * t];
    const int i = static_cast<int>(row[0]);
    if (i >= n) continue;
    const int cls = static_cast<int>(row[1]);
    const double x0 = (i % cols) * w, y0 = (i / cols) * h;
    const cv::Point p1(static_cast<int>(x0 + (row[2] - row[4] / 2) * w), static_cast<int>(y0 + (row[3] - row[5] / 2) * h));
    const cv::Point p2(static_cast<int>(x0 + (row[2] + row[4] / 2) * w), static_cast<int>(y0 + (row[3] + row[5] / 2) * h));
    const std::string label = cls < static_cast<int>(options.names.size()) ? options.names[cls] : std::to_string(cls);
    DrawBoxLabel(&grid, p1, p2, ClassColor(cls), label, /*line_width=*/2, /*font_scale=*/0.4);
  }
  return grid;
}

ffr::Status RenderDatasetGrid(const Dataset& dataset, const ShowOptions& options, const std::string& path) {
  LoaderOptions lo;
  lo.split = options.split;
  lo.training = options.augment;
  lo.img_size = options.img_size;
  lo.batch_size = options.images;
  lo.seed = options.seed;
  lo.workers = 2;
  lo.prefetch = 1;
  std::unique_ptr<Loader> loader;
  FFR_RETURN_IF_ERROR(Loader::Open(dataset, lo, &loader));
  FFR_RETURN_IF_ERROR(loader->Start(0));
  const Batch* batch = nullptr;
  FFR_RETURN_IF_ERROR(loader->Next(&batch));
  if (batch == nullptr) return ffr::Status::NotFound(loader->split() + ": no samples to show");
  GridOptions go;
  go.max_images = options.images;
  go.names = dataset.manifest().names;
  return WriteJpeg(RenderBatchGrid(*batch, go), path);
}

ffr::Status WriteJpeg(const cv::Mat& bgr, const std::string& path, int quality, ffr::Env* env) {
  tjhandle h = tjInitCompress();
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  const int rc = tjCompress2(h, bgr.data, bgr.cols, static_cast<int>(bgr.step), bgr.rows, TJPF_BGR, &buf, &size,
                             TJSAMP_420, quality, 0);
  ffr::Status s;
  if (rc != 0)
    s = ffr::Status::IOError(path + ": JPEG encode failed: " + tjGetErrorStr2(h));
  else
    s = ffr::WriteFileAtomically(env, path, std::string(reinterpret_cast<char*>(buf), size));
  tjFree(buf);
  tjDestroy(h);
  return s;
}

}  // namespace ffyolo
