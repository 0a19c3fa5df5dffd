#include <utility>

#include "ffyolo/source.h"
#include "source_layouts.h"

namespace ffyolo {

SourceImages::SourceImages(SourceLayout layout, std::string image_dir, std::string label_dir)
    : layout_(layout), image_dir_(std::move(image_dir)), label_dir_(std::move(label_dir)) {}

std::string_view SourceImages::file_name(size_t i) const {
  const uint64_t begin = i == 0 ? 0 : name_end_[i - 1];
  return std::string_view(names_).substr(begin, name_end_[i] - begin);
}

void SourceImages::Reserve(size_t images, size_t name_bytes, size_t boxes) {
  image_ids_.reserve(images);
  widths_.reserve(images);
  heights_.reserve(images);
  name_end_.reserve(images);
  begin_.reserve(images + 1);
  names_.reserve(name_bytes);
  boxes_.reserve(boxes);
  if (layout_ == SourceLayout::kYoloTxt) labelled_.reserve(images);
}

void SourceImages::Add(int64_t image_id, std::string_view file_name, uint32_t width, uint32_t height,
                       const std::vector<Box>& boxes, bool labelled) {
  image_ids_.push_back(image_id);
  widths_.push_back(width);
  heights_.push_back(height);
  names_.append(file_name);
  name_end_.push_back(names_.size());
  boxes_.insert(boxes_.end(), boxes.begin(), boxes.end());
  begin_.push_back(boxes_.size());
  if (layout_ == SourceLayout::kYoloTxt) labelled_.push_back(labelled);
}

void SourceImages::SetEvalBoxes(std::vector<uint64_t> begin, std::vector<EvalBox> boxes) {
  begin_ = std::move(begin);
  eval_boxes_ = std::move(boxes);
}

void SourceImages::TakeEvalBoxes(std::vector<uint64_t>* begin, std::vector<EvalBox>* boxes) {
  *begin = std::move(begin_);
  *boxes = std::move(eval_boxes_);
  begin_.assign(size() + 1, 0);
  eval_boxes_.clear();
}

SourceImage SourceImages::operator[](size_t i) const {
  SourceImage image;
  image.info.image_id = image_ids_[i];
  image.info.width = widths_[i];
  image.info.height = heights_[i];
  image.info.file_name = file_name(i);
  image.path = path(i);
  if (layout_ == SourceLayout::kYoloTxt && labelled_[i])
    image.label_path = source_internal::YoloLabelPath(label_dir_, image.info.file_name);
  image.area_from_box = layout_ == SourceLayout::kYoloTxt;
  if (const auto problem = problems_.find(i); problem != problems_.end()) {
    image.problem = problem->second;
    return image;
  }
  if (layout_ == SourceLayout::kYoloTxt) {
    image.info.boxes.assign(boxes_.begin() + begin_[i], boxes_.begin() + begin_[i + 1]);
    return image;
  }
  image.eval_boxes.assign(eval_boxes_.begin() + begin_[i], eval_boxes_.begin() + begin_[i + 1]);
  for (const EvalBox& e : image.eval_boxes) {
    Box box;
    // Not objects anyone can detect (JSON2YOLO drops them too); pycocotools counts them.
    if (e.w <= 0 || e.h <= 0) continue;
    if (source_internal::CocoTrainingBox(e, widths_[i], heights_[i], &box)) image.info.boxes.push_back(box);
  }
  return image;
}

}  // namespace ffyolo
