#include "ffyolo/dataset_eval.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ffyolo {
namespace {

double Round(double v, int decimals) {
  const double f = std::pow(10.0, decimals);
  return std::nearbyint(v * f) / f;
}

// The sample's non-crowd boxes in original pixels: val.py's labels.
std::vector<ValLabel> Labels(const LabelIndex& index, size_t i, bool single_cls) {
  std::vector<ValLabel> labels;
  const double w = index.width(i), h = index.height(i);
  for (size_t k = 0; k < index.box_count(i); ++k) {
    const Box& b = index.boxes(i)[k];
    if (b.iscrowd) continue;
    labels.push_back({single_cls ? 0 : b.class_index, (b.cx - b.w / 2) * w, (b.cy - b.h / 2) * h, (b.cx + b.w / 2) * w,
                      (b.cy + b.h / 2) * h});
  }
  return labels;
}

}  // namespace

std::vector<std::string> SingleClassNames(const std::vector<std::string>& names) {
  return names.size() == 1 ? names : std::vector<std::string>{"item"};
}

DatasetEvaluator::DatasetEvaluator(const Manifest& manifest, const LabelIndex& index, bool single_cls)
    : manifest_(manifest), index_(index), single_cls_(single_cls), seen_(index.size(), false) {
  for (size_t c = 0; c < manifest.category_ids.size(); ++c) class_of_category_[manifest.category_ids[c]] = static_cast<int>(c);
  for (size_t i = 0; i < index.size(); ++i) {
    image_index_[index.image_id(i)] = i;
    ground_truth_.image_ids.push_back(index.image_id(i));
    const auto add = [&](uint16_t class_index, bool iscrowd, const std::array<double, 4>& bbox, double area) {
      ground_truth_.annotations.push_back(
          {index.image_id(i), manifest.category_ids[single_cls ? 0 : class_index], bbox, area, iscrowd});
    };
    if (index.has_eval_boxes()) {  // the COCO JSON's own numbers: pycocotools' ground truth
      for (size_t k = 0; k < index.eval_box_count(i); ++k) {
        const EvalBox& b = index.eval_boxes(i)[k];
        add(b.class_index, b.iscrowd, {b.x, b.y, b.w, b.h}, b.area);
      }
      continue;
    }
    const double w = index.width(i), h = index.height(i);
    for (size_t k = 0; k < index.box_count(i); ++k) {
      const Box& b = index.boxes(i)[k];
      add(b.class_index, b.iscrowd, {(b.cx - b.w / 2) * w, (b.cy - b.h / 2) * h, b.w * w, b.h * h}, b.area);
    }
  }
}

void DatasetEvaluator::AddImage(size_t index, const std::vector<ValPrediction>& predictions) {
  seen_[index] = true;
  metrics_.AddImage(predictions, Labels(index_, index, single_cls_));
  for (const ValPrediction& p : predictions) {
    CocoDetection d;
    d.image_id = index_.image_id(index);
    d.category_id = manifest_.category_ids[single_cls_ ? 0 : p.cls];
    d.bbox = {Round(p.x1, 3), Round(p.y1, 3), Round(p.x2 - p.x1, 3), Round(p.y2 - p.y1, 3)};
    d.score = Round(p.conf, 5);
    detections_.push_back(d);
  }
}

ffr::Status DatasetEvaluator::AddCocoResults(const std::vector<CocoDetection>& detections, const std::string& where) {
  std::vector<std::vector<ValPrediction>> per_image(index_.size());
  for (size_t k = 0; k < detections.size(); ++k) {
    const CocoDetection& d = detections[k];
    const auto img = image_index_.find(d.image_id);
    if (img == image_index_.end())
      return ffr::Status::InvalidArgument(where + ": detection " + std::to_string(k) + " has image_id " +
                                          std::to_string(d.image_id) + ", which is not in the split");
    const auto cls = class_of_category_.find(d.category_id);
    if (cls == class_of_category_.end())
      return ffr::Status::InvalidArgument(where + ": detection " + std::to_string(k) + " has category_id " +
                                          std::to_string(d.category_id) + ", which is not in the dataset");
    per_image[img->second].push_back(
        {d.bbox[0], d.bbox[1], d.bbox[0] + d.bbox[2], d.bbox[1] + d.bbox[3], d.score, single_cls_ ? 0 : cls->second});
  }
  for (size_t i = 0; i < per_image.size(); ++i) {
    // val.py sees each image's NMS output sorted by confidence.
    std::stable_sort(per_image[i].begin(), per_image[i].end(),
                     [](const ValPrediction& a, const ValPrediction& b) { return a.conf > b.conf; });
    seen_[i] = true;
    metrics_.AddImage(per_image[i], Labels(index_, i, single_cls_));
  }
  detections_.insert(detections_.end(), detections.begin(), detections.end());
  return ffr::Status::OK();
}

DatasetEvalResult DatasetEvaluator::Finish() const {
  DatasetEvalResult r;
  r.metrics = metrics_.Compute();
  r.detections = static_cast<int64_t>(detections_.size());
  CocoGroundTruth gt;
  for (size_t i = 0; i < seen_.size(); ++i) r.images += seen_[i] ? 1 : 0;
  gt.image_ids.reserve(r.images);
  for (size_t i = 0; i < seen_.size(); ++i)
    if (seen_[i]) gt.image_ids.push_back(index_.image_id(i));
  gt.annotations = ground_truth_.annotations;  // annotations of images not evaluated are never looked up
  CocoEvaluator coco(std::move(gt), detections_);
  r.coco = coco.Summarize();
  return r;
}

std::string DatasetEvaluator::PredictionsJson() const {
  std::string out = "[";
  char buf[256];
  for (size_t k = 0; k < detections_.size(); ++k) {
    const CocoDetection& d = detections_[k];
    std::snprintf(buf, sizeof(buf), "%s{\"image_id\": %lld, \"category_id\": %lld, \"bbox\": [%.3f, %.3f, %.3f, %.3f], "
                  "\"score\": %.5f}", k ? ",\n " : "", static_cast<long long>(d.image_id),
                  static_cast<long long>(d.category_id), d.bbox[0], d.bbox[1], d.bbox[2], d.bbox[3], d.score);
    out += buf;
  }
  return out + "]\n";
}

std::string FormatEvalReport(const DatasetEvalResult& result, const std::vector<std::string>& names, bool per_class) {
  std::string out = FormatValMetricsTable(result.metrics, names, per_class);
  if (!out.empty() && out.back() != '\n') out += '\n';
  out += "COCO evaluation (pycocotools COCOeval, bbox):\n";
  for (const std::string& line : CocoEvaluator::SummaryLines(result.coco)) out += line + "\n";
  return out;
}

std::string EvalStatsJson(const DatasetEvalResult& result) {
  static constexpr const char* kCocoNames[12] = {"AP",  "AP50", "AP75",  "APs", "APm", "APl",
                                                 "AR1", "AR10", "AR100", "ARs", "ARm", "ARl"};
  char buf[64];
  const auto number = [&](double v) {
    std::snprintf(buf, sizeof(buf), "%.17g", v);
    return std::string(buf);
  };
  std::string out = "{\n  \"coco\": {";
  for (int k = 0; k < 12; ++k) out += std::string(k ? ", " : "") + "\"" + kCocoNames[k] + "\": " + number(result.coco[k]);
  const ValMetrics& m = result.metrics;
  out += "},\n  \"P\": " + number(m.mp) + ", \"R\": " + number(m.mr) + ", \"mAP50\": " + number(m.map50) +
         ", \"mAP50-95\": " + number(m.map) + ",\n  \"images\": " + std::to_string(result.images) +
         ", \"instances\": " + std::to_string(m.instances) + ", \"detections\": " + std::to_string(result.detections) +
         "\n}\n";
  return out;
}

}  // namespace ffyolo
