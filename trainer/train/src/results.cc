#include "ffyolo/results.h"

#include <cstdio>
#include <sstream>

#include <opencv2/imgproc.hpp>
#ifdef FFYOLO_HAVE_IMGCODECS
#include <opencv2/imgcodecs.hpp>
#endif

#include "ffr/env.h"
#include "ffyolo/batch_grid.h"

namespace ffyolo {
namespace {

const char* kColumns[] = {"epoch",           "train/box_loss",       "train/obj_loss", "train/cls_loss",
                          "metrics/precision", "metrics/recall",     "metrics/mAP_0.5", "metrics/mAP_0.5:0.95",
                          "val/box_loss",    "val/obj_loss",         "val/cls_loss",   "x/lr0",
                          "x/lr1",           "x/lr2"};
constexpr int kNumColumns = 14;

std::vector<double> Values(const EpochResult& r) {
  return {static_cast<double>(r.epoch), r.train_box, r.train_obj, r.train_cls, r.precision, r.recall, r.map50,
          r.map, r.val_box, r.val_obj, r.val_cls, r.lr[0], r.lr[1], r.lr[2]};
}

}  // namespace

std::string ResultsCsvHeader() {
  std::string line;
  char buf[64];
  for (int i = 0; i < kNumColumns; ++i) {
    std::snprintf(buf, sizeof(buf), "%20s%s", kColumns[i], i + 1 < kNumColumns ? "," : "");
    line += buf;
  }
  return line;
}

std::string ResultsCsvRow(const EpochResult& r) {
  std::string line;
  char buf[64];
  const std::vector<double> v = Values(r);
  for (int i = 0; i < kNumColumns; ++i) {
    std::snprintf(buf, sizeof(buf), "%20.5g%s", v[i], i + 1 < kNumColumns ? "," : "");
    line += buf;
  }
  return line;
}

ffr::Status WriteResultsCsv(const std::string& path, const std::vector<EpochResult>& rows, ffr::Env* env) {
  std::string text = ResultsCsvHeader() + "\n";
  for (const EpochResult& r : rows) text += ResultsCsvRow(r) + "\n";
  return ffr::WriteFileAtomically(env, path, text);
}

ffr::Status ReadResultsCsv(const std::string& path, std::vector<EpochResult>* rows) {
  std::string text;
  FFR_RETURN_IF_ERROR(ffr::ReadFileToString(ffr::Env::Default(), path, &text));
  std::istringstream in(text);
  std::string line;
  rows->clear();
  int line_no = 0;
  while (std::getline(in, line)) {
    if (++line_no == 1 || line.empty()) continue;  // header
    std::vector<double> v;
    std::istringstream fields(line);
    std::string field;
    while (std::getline(fields, field, ',')) {
      try {
        v.push_back(std::stod(field));
      } catch (...) {
        return ffr::Status::Corruption(path + ":" + std::to_string(line_no) + ": not a number: '" + field + "'");
      }
    }
    if (v.size() != kNumColumns)
      return ffr::Status::Corruption(path + ":" + std::to_string(line_no) + ": " + std::to_string(v.size()) +
                                     " columns, expected " + std::to_string(kNumColumns));
    EpochResult r;
    r.epoch = static_cast<int64_t>(v[0]);
    r.train_box = v[1], r.train_obj = v[2], r.train_cls = v[3];
    r.precision = v[4], r.recall = v[5], r.map50 = v[6], r.map = v[7];
    r.val_box = v[8], r.val_obj = v[9], r.val_cls = v[10];
    r.lr[0] = v[11], r.lr[1] = v[12], r.lr[2] = v[13];
    rows->push_back(r);
  }
  return ffr::Status::OK();
}

ffr::Status PlotResults(const std::vector<EpochResult>& rows, const std::string& png_path, std::string* written,
                        ffr::Env* env) {
  // Ultralytics' panel order: columns 1, 2, 3, 4, 5 then 8, 9, 10, 6, 7.
  const int panels[10] = {1, 2, 3, 4, 5, 8, 9, 10, 6, 7};
  const int pw = 360, ph = 300, margin = 44;
  cv::Mat img(2 * ph, 5 * pw, CV_8UC3, cv::Scalar(255, 255, 255));
  for (int p = 0; p < 10; ++p) {
    const int col = panels[p];
    const cv::Rect area((p % 5) * pw + margin, (p / 5) * ph + 30, pw - margin - 12, ph - 30 - 36);
    cv::rectangle(img, area, cv::Scalar(180, 180, 180), 1);
    cv::putText(img, kColumns[col], cv::Point(area.x, area.y - 10), cv::FONT_HERSHEY_SIMPLEX, 0.5,
                cv::Scalar(40, 40, 40), 1, cv::LINE_AA);
    if (rows.empty()) continue;
    double lo = 1e300, hi = -1e300;
    for (const EpochResult& r : rows) {
      const double v = Values(r)[col];
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    if (hi - lo < 1e-12) {
      hi += 0.5 * std::max(1e-6, std::abs(hi));
      lo -= 0.5 * std::max(1e-6, std::abs(lo));
    }
    const int64_t e0 = rows.front().epoch, e1 = std::max(rows.back().epoch, e0 + 1);
    auto point = [&](const EpochResult& r) {
      const double x = area.x + (r.epoch - e0) * static_cast<double>(area.width) / (e1 - e0);
      const double y = area.y + area.height - (Values(r)[col] - lo) * area.height / (hi - lo);
      return cv::Point(static_cast<int>(x), static_cast<int>(y));
    };
    for (size_t i = 0; i < rows.size(); ++i) {
      if (i > 0) cv::line(img, point(rows[i - 1]), point(rows[i]), cv::Scalar(180, 119, 31), 2, cv::LINE_AA);
      cv::circle(img, point(rows[i]), 3, cv::Scalar(180, 119, 31), cv::FILLED, cv::LINE_AA);
    }
    char label[32];
    std::snprintf(label, sizeof(label), "%.4g", hi);
    cv::putText(img, label, cv::Point(area.x - margin + 2, area.y + 10), cv::FONT_HERSHEY_SIMPLEX, 0.35,
                cv::Scalar(90, 90, 90), 1, cv::LINE_AA);
    std::snprintf(label, sizeof(label), "%.4g", lo);
    cv::putText(img, label, cv::Point(area.x - margin + 2, area.y + area.height), cv::FONT_HERSHEY_SIMPLEX, 0.35,
                cv::Scalar(90, 90, 90), 1, cv::LINE_AA);
    cv::putText(img, "epoch " + std::to_string(e0) + ".." + std::to_string(rows.back().epoch),
                cv::Point(area.x, area.y + area.height + 18), cv::FONT_HERSHEY_SIMPLEX, 0.35, cv::Scalar(90, 90, 90),
                1, cv::LINE_AA);
  }
#ifdef FFYOLO_HAVE_IMGCODECS
  std::vector<uchar> png;
  if (!cv::imencode(".png", img, png)) return ffr::Status::IOError(png_path + ": PNG encode failed");
  *written = png_path;
  return ffr::WriteFileAtomically(env, png_path, std::string(png.begin(), png.end()));
#else
  *written = png_path.substr(0, png_path.rfind('.')) + ".jpg";
  return WriteJpeg(img, *written, /*quality=*/90, env);
#endif
}

}  // namespace ffyolo
