#include "sample_builder.h"

#include <algorithm>
#include <opencv2/imgproc.hpp>

#include "ffr/format.h"
#include "ffyolo/cutmix.h"
#include "ffyolo/letterbox.h"
#include "ffyolo/mosaic.h"
#include "ffyolo/orientation.h"
#include "ffyolo/perspective.h"
#include "ffyolo/hsv.h"
#include "ffyolo/planes.h"
#include "ffyolo/record.h"
#include "image_view.h"

namespace ffyolo {

// One image after load_image: decoded, resized so that its longest side is
// img_size, with its boxes in pixels of that size.
struct SampleBuilder::Loaded {
  ImageDecoder decoder;
  std::vector<uint8_t> resized;
  RecordView record;  // points into the builder's read buffer until the next read
  std::string where;  // names the sample in errors
  cv::Mat image;      // points into the decoder's buffer or `resized`; empty until decoded
  int64_t index = -1;
  int orig_w = 0, orig_h = 0;  // as viewed
  int orientation = 1;         // the EXIF orientation decoding applies (1: none)
  int64_t image_id = 0;
  std::vector<Box> boxes;  // normalized, crowd boxes left out
};

namespace {

PerspectiveHyp PerspectiveOf(const Hyp& h) {
  PerspectiveHyp p;
  p.degrees = h.degrees;
  p.translate = h.translate;
  p.scale = h.scale;
  p.shear = h.shear;
  p.perspective = h.perspective;
  return p;
}

}  // namespace

SampleBuilder::SampleBuilder(const SampleContext& context) : ctx_(context) {
  for (int i = 0; i < 4; ++i) loaded_.emplace_back(new Loaded());
}

SampleBuilder::~SampleBuilder() = default;

bool SampleBuilder::Read(const int64_t* indices, int count, SampleError* error) {
  ffr::Sample samples[4];
  ffr::Status st = ctx_.reader->ReadBatch(indices, count, &read_buffer_, samples);
  if (!st.ok()) {
    // Find which sample failed, so that the report names it.
    for (int k = 0; k < count; ++k) {
      ffr::Status one = ctx_.reader->Read(indices[k], &read_buffer_, &samples[0]);
      if (!one.ok()) {
        *error = {indices[k], one, ctx_.pixel_cache};
        return false;
      }
    }
    *error = {indices[0], st, ctx_.pixel_cache};
    return false;
  }
  for (int k = 0; k < count; ++k) {
    Loaded& l = *loaded_[k];
    l.where = ctx_.pixel_cache ? ctx_.reader->Describe(indices[k])
                               : ctx_.split + " sample " + std::to_string(indices[k]);
    std::atomic<bool>* checked = ctx_.checked ? &ctx_.checked[indices[k]] : nullptr;
    if (checked && !checked->load(std::memory_order_relaxed)) {
      const uint32_t stored = ctx_.reader->sample_crc(indices[k]);
      const uint32_t computed = ffr::Crc32(samples[k].data, samples[k].size);
      if (stored != computed)
        st = Status::Corruption(l.where + ": checksum mismatch (stored " + std::to_string(stored) + ", computed " +
                                std::to_string(computed) + ")");
      else
        checked->store(true, std::memory_order_relaxed);
    }
    if (st.ok()) st = RecordView::Parse(samples[k].data, samples[k].size, l.where, &l.record);
    if (st.ok() && ctx_.pixel_cache != (l.record.encoding() == ImageEncoding::kBgr))
      st = Status::Corruption(l.where + (ctx_.pixel_cache ? ": a pixel cache's record holds an encoded image"
                                                          : ": a dataset's record holds raw pixels"));
    if (!st.ok()) {
      *error = {indices[k], st, ctx_.pixel_cache};
      return false;
    }
    const RecordView& rec = l.record;
    l.index = indices[k];
    // load_image's h0, w0: the image as viewed (the record gives it as stored).
    l.orientation = ctx_.exif_applied ? rec.exif_orientation() : 1;
    const cv::Size viewed = ViewedSize(cv::Size(static_cast<int>(rec.width()), static_cast<int>(rec.height())),
                                       l.orientation);
    l.orig_w = viewed.width;
    l.orig_h = viewed.height;
    l.image_id = rec.image_id();
    l.image = cv::Mat();
    l.boxes.clear();
    for (size_t b = 0; b < rec.box_count(); ++b) {
      const Box box = rec.box(b);
      if (!box.iscrowd) l.boxes.push_back(box);  // crowd regions are never training targets
    }
  }
  return true;
}

bool SampleBuilder::Decode(int k, bool augment, const cv::Rect& needed, SampleError* error) {
  Loaded& l = *loaded_[k];
  const RecordView& rec = l.record;
  const int s = ctx_.img_size;
  const cv::Size target = LoadResizeSize(l.orig_w, l.orig_h, s, ctx_.augmentation);
  if (ctx_.pixel_cache) {
    // Already load_image's output: a view of the bytes read (or mapped), no copy.
    const size_t bytes = static_cast<size_t>(target.width) * target.height * 3;
    if (rec.image_size() != bytes) {
      *error = {l.index,
                Status::Corruption(l.where + ": " + std::to_string(rec.image_size()) + " pixel bytes where a " +
                                   std::to_string(l.orig_w) + "x" + std::to_string(l.orig_h) + " image at --img " +
                                   std::to_string(s) + " has " + std::to_string(bytes)),
                true};
      return false;
    }
    l.image = cv::Mat(target, CV_8UC3, const_cast<uint8_t*>(rec.image_data()));
    return true;
  }
  if (ctx_.decodes) ctx_.decodes->fetch_add(1, std::memory_order_relaxed);
  DecodeOptions options;
  options.orientation = l.orientation;
  if (ctx_.decode_less) options.min_w = target.width, options.min_h = target.height;
  // The region in decoded pixels: the record's size gives the decoder's scale
  // before decoding (a record that lies about it fails the check below).
  const auto record_at_scale = [&](int denominator) {
    return cv::Size((l.orig_w + denominator - 1) / denominator, (l.orig_h + denominator - 1) / denominator);
  };
  const cv::Size expected = record_at_scale(
      rec.encoding() == ImageEncoding::kJpeg ? DctScaleDenominator(l.orig_w, l.orig_h, options) : 1);
  if (!needed.empty())
    options.region = expected == target ? needed : ResizeSourceRegion(needed, expected, target);
  cv::Mat decoded;
  int denominator = 1;
  ffr::Status st = l.decoder.Decode(rec.image_data(), rec.image_size(), rec.encoding(),
                                    l.where + " (" + std::string(rec.file_name()) + ")", options, &decoded,
                                    &denominator);
  if (!st.ok()) {
    *error = {l.index, st};
    return false;
  }
  // The bytes must be the image the record describes (at the chosen DCT scale).
  if (decoded.size() != record_at_scale(denominator)) {
    *error = {l.index, ffr::Status::Corruption(l.where + ": image decodes to " + std::to_string(decoded.cols) + "x" +
                                               std::to_string(decoded.rows) + ", the record says " +
                                               std::to_string(l.orig_w) + "x" + std::to_string(l.orig_h))};
    return false;
  }
  if (decoded.size() == target) {
    l.image = decoded;
  } else {
    l.image = ImageView(&l.resized, target.height, target.width);
    cv::resize(decoded, l.image, target, 0, 0, LoadResizeInterpolation(augment, l.orig_w, l.orig_h, s, ctx_.augmentation));
  }
  return true;
}

bool SampleBuilder::Pixels(int k, const cv::Rect& needed, SampleError* error) {
  Loaded& l = *loaded_[k];
  const int32_t span = ctx_.store && planned_ ? planned_->SpanOf(l.index) : -1;
  if (span < 0) return Decode(k, /*augment=*/true, needed, error);
  const cv::Size size = LoadResizeSize(l.orig_w, l.orig_h, ctx_.img_size, ctx_.augmentation);
  switch (ctx_.store->Acquire(span, static_cast<uint64_t>(size.width) * size.height * 3, &l.image)) {
    case DecodedImageStore::Claim::kHeld:
      return true;
    case DecodedImageStore::Claim::kUnstored:
      return Decode(k, /*augment=*/true, needed, error);
    case DecodedImageStore::Claim::kDecode:
      break;
  }
  if (!Decode(k, /*augment=*/true, cv::Rect(), error)) {
    ctx_.store->Abandon(span);
    return false;
  }
  l.image = l.image.clone();  // the store's own, outliving this builder's buffers
  ctx_.store->Publish(span, l.image);
  return true;
}

bool SampleBuilder::Load(int64_t index, bool augment, SampleError* error) {
  return Read(&index, 1, error) && Decode(0, augment, cv::Rect(), error);
}

bool SampleBuilder::LoadImage(int64_t index, bool augment, cv::Mat* image, const RecordView** record,
                              SampleError* error) {
  if (!Load(index, augment, error)) return false;
  *image = loaded_[0]->image;
  *record = &loaded_[0]->record;
  return true;
}

bool SampleBuilder::Mosaic(SampleRandom* rng, int64_t index, const std::vector<int64_t>& partners,
                           const std::array<int64_t, 3>* tiles, cv::Mat* out, std::vector<PixelBox>* boxes,
                           SampleError* error) {
  const int s = ctx_.img_size;
  const Augmentation mode = ctx_.augmentation;
  // yc, xc = int(uniform(s/2, 3s/2)); YOLOv5: indices = [index] + choices(k=3), shuffled.
  const int yc = static_cast<int>(rng->Uniform(s / 2.0, 1.5 * s));
  const int xc = static_cast<int>(rng->Uniform(s / 2.0, 1.5 * s));
  int64_t indices[4] = {index, 0, 0, 0};
  if (tiles) {
    std::copy(tiles->begin(), tiles->end(), indices + 1);
  } else {
    for (int k = 1; k < 4; ++k) indices[k] = partners[rng->Below(partners.size())];
    for (int k = 3; k > 0; --k) std::swap(indices[k], indices[rng->Below(k + 1)]);
  }
  if (!Read(indices, 4, error)) return false;

  // load_image's sizes follow from the records, so the placement and the warp
  // are known before decoding, and only the tiles the warp samples are decoded.
  std::array<cv::Size, 4> sizes;
  for (int k = 0; k < 4; ++k) sizes[k] = LoadResizeSize(loaded_[k]->orig_w, loaded_[k]->orig_h, s, mode);
  const std::array<MosaicTile, 4> plan = PlanMosaic(sizes, s, xc, yc);
  boxes->clear();
  for (int k = 0; k < 4; ++k)
    AppendPixelBoxes(loaded_[k]->boxes, sizes[k].width, sizes[k].height, plan[k].padw(), plan[k].padh(), boxes,
                     mode);
  for (PixelBox& b : *boxes) {  // np.clip(x, 0, 2 * s)
    b.x1 = std::clamp(b.x1, 0.f, 2.f * s);
    b.y1 = std::clamp(b.y1, 0.f, 2.f * s);
    b.x2 = std::clamp(b.x2, 0.f, 2.f * s);
    b.y2 = std::clamp(b.y2, 0.f, 2.f * s);
  }
  if (mode == Augmentation::kUltralytics8) RemoveZeroAreaBoxes(boxes);
  double scale = 1;
  const cv::Matx33d m = DrawPerspective(rng, PerspectiveOf(ctx_.hyp), 2 * s, 2 * s, s, s, &scale, mode);
  const std::array<cv::Rect, 4> regions = TileRegionsSampledByWarp(plan, s, m);
  std::array<cv::Mat, 4> images;  // unsampled ones stay empty
  for (int k = 0; k < 4; ++k) {
    if (regions[k].empty()) continue;
    if (!Pixels(k, ctx_.decode_less ? regions[k] : cv::Rect(), error)) return false;
    images[k] = loaded_[k]->image;
  }
  WarpMosaic(images, plan, s, m, out);
  TransformBoxes(m, scale, s, s, boxes, mode);
  return true;
}

bool SampleBuilder::SingleImage(SampleRandom* rng, int64_t index, int height, int width, cv::Mat* out,
                                std::vector<PixelBox>* boxes, ImageMeta* meta, SampleError* error) {
  if (!Read(&index, 1, error) || !Pixels(0, cv::Rect(), error)) return false;
  const Loaded& l = *loaded_[0];
  const Augmentation mode = ctx_.augmentation;
  cv::Mat src = l.image;
  LetterboxPlan lb;  // Ultralytics 8: none (ratio 1, no padding)
  if (mode == Augmentation::kYolov5) {
    lb = PlanLetterbox(l.image.cols, l.image.rows, width, height, /*scaleup=*/true);
    src = ImageView(&mix_buffer_, height, width);
    ApplyLetterbox(l.image, lb, &src);
  }
  boxes->clear();
  AppendPixelBoxes(l.boxes, lb.ratio * l.image.cols, lb.ratio * l.image.rows, lb.dw, lb.dh, boxes, mode);
  // random_perspective from the (letterboxed) image's centre into height x width.
  double scale = 1;
  const cv::Matx33d m = DrawPerspective(rng, PerspectiveOf(ctx_.hyp), src.cols, src.rows, width, height, &scale, mode);
  WarpImage(src, m, out);
  TransformBoxes(m, scale, width, height, boxes, mode);
  meta->image_id = l.image_id;
  meta->orig_width = l.orig_w;
  meta->orig_height = l.orig_h;
  meta->ratio_w = lb.ratio * l.image.cols / l.orig_w;
  meta->ratio_h = lb.ratio * l.image.rows / l.orig_h;
  meta->pad_w = lb.dw;
  meta->pad_h = lb.dh;
  return true;
}

bool SampleBuilder::BuildTraining(SampleRandom* rng, int64_t index, const std::vector<int64_t>& partners,
                                  const SampleDraws* draws, uint8_t* dst, std::vector<NormBox>* targets,
                                  ImageMeta* meta, SampleError* error) {
  const int s = ctx_.img_size;
  const Hyp& hyp = ctx_.hyp;
  // Ultralytics 8: reads go through the plan's spans (Pixels), and the store's images are let go with the sample.
  struct PlannedSample {
    SampleBuilder* builder;
    ~PlannedSample() {
      if (!builder->planned_) return;
      builder->planned_ = nullptr;
      for (auto& l : builder->loaded_) l->image.release();
    }
  } planned{this};
  planned_ = draws;
  cv::Mat img = ImageView(&work_buffer_, s, s);
  std::vector<PixelBox> boxes;
  *meta = ImageMeta();
  meta->dataset_index = index;
  // YOLOv5 draws mosaic and mixup here (mixup only after a mosaic, its second image a mosaic too);
  // Ultralytics 8 planned both (mixup after either path, its image mosaicked or not).
  const bool mosaic = draws ? draws->mosaic : rng->Uniform() < hyp.mosaic;
  if (mosaic) {
    if (!Mosaic(rng, index, partners, draws ? &draws->partners : nullptr, &img, &boxes, error)) return false;
    meta->mosaic = true;
    // The primary image's identity (YOLOv5's shuffle put it in some tile).
    for (const auto& l : loaded_) {
      if (l->index == index) {
        meta->image_id = l->image_id;
        meta->orig_width = l->orig_w;
        meta->orig_height = l->orig_h;
        break;
      }
    }
  } else {
    if (!SingleImage(rng, index, s, s, &img, &boxes, meta, error)) return false;
  }
  const bool mixup = draws ? draws->mixup.applied : mosaic && rng->Uniform() < hyp.mixup;
  if (mixup) {
    // A second sample, blended with r ~ Beta(32, 32).
    cv::Mat second = ImageView(&mix_buffer_, s, s);
    if (draws) {
      if (!MixedIn(rng, draws->mixup, &second, error)) return false;
    } else {
      const int64_t other = partners[rng->Below(partners.size())];
      if (!Mosaic(rng, other, partners, nullptr, &second, &mix_boxes_, error)) return false;
    }
    const double r = rng->BetaSymmetric(32);
    // uint8(im * r + im2 * (1 - r)): truncation, as numpy's astype.
    uint8_t* a = img.data;
    const uint8_t* b = second.data;
    for (size_t i = 0, n = img.total() * 3; i < n; ++i)
      a[i] = static_cast<uint8_t>(a[i] * r + b[i] * (1 - r));
    boxes.insert(boxes.end(), mix_boxes_.begin(), mix_boxes_.end());
  }
  if (draws && draws->cutmix.applied) {  // Ultralytics 8's alone
    cv::Mat second = ImageView(&mix_buffer_, s, s);
    if (!MixedIn(rng, draws->cutmix, &second, error)) return false;
    ApplyCutMix(rng, second, mix_boxes_, &img, &boxes);
  }
  Finish(rng, img, boxes, dst, targets);
  return true;
}

bool SampleBuilder::MixedIn(SampleRandom* rng, const MixedImage& image, cv::Mat* out, SampleError* error) {
  const int s = ctx_.img_size;
  ImageMeta unused;
  return image.mosaic ? Mosaic(rng, image.index, {}, &image.partners, out, &mix_boxes_, error)
                      : SingleImage(rng, image.index, s, s, out, &mix_boxes_, &unused, error);
}

bool SampleBuilder::BuildRectTraining(SampleRandom* rng, int64_t index, int height, int width, uint8_t* dst,
                                      std::vector<NormBox>* targets, ImageMeta* meta, SampleError* error) {
  cv::Mat img = ImageView(&work_buffer_, height, width);
  std::vector<PixelBox> boxes;
  *meta = ImageMeta();
  meta->dataset_index = index;
  if (!SingleImage(rng, index, height, width, &img, &boxes, meta, error)) return false;
  Finish(rng, img, boxes, dst, targets);
  return true;
}

void SampleBuilder::Finish(SampleRandom* rng, const cv::Mat& img, const std::vector<PixelBox>& boxes, uint8_t* dst,
                           std::vector<NormBox>* targets) {
  const Hyp& hyp = ctx_.hyp;
  const bool u8 = ctx_.augmentation == Augmentation::kUltralytics8;
  // HSV, flips and the planes in one pass (WriteRgbPlanes with PlaneAugment), drawn in YOLOv5's order
  // (Ultralytics 8's is the same, and then draws bgr).
  PlaneAugment augment;
  HsvLuts luts;
  if (hyp.hsv_h != 0 || hyp.hsv_s != 0 || hyp.hsv_v != 0) {  // as YOLOv5: no colour round trip when off
    luts = u8 ? BuildShiftedHueLuts(DrawHsv(rng, hyp.hsv_h, hyp.hsv_s, hyp.hsv_v))
              : BuildHsvLuts(DrawHsvGains(rng, hyp.hsv_h, hyp.hsv_s, hyp.hsv_v));
    augment.hsv = &luts;
  }
  augment.flip_up_down = rng->Uniform() < hyp.flipud;
  augment.flip_left_right = rng->Uniform() < hyp.fliplr;
  // Ultralytics 8's Format keeps OpenCV's B, G, R order unless uniform(0, 1) > bgr, drawn in every sample.
  augment.bgr = u8 && !(rng->Uniform() > ctx_.ultralytics8_hyp.bgr);
  if (u8) {
    *targets = ToNormalizedAfterFlips(boxes, img.cols, img.rows, augment.flip_up_down, augment.flip_left_right);
  } else {
    *targets = ToNormalized(boxes, img.cols, img.rows);
    for (NormBox& b : *targets) {
      if (augment.flip_up_down) b.cy = 1 - b.cy;
      if (augment.flip_left_right) b.cx = 1 - b.cx;
    }
  }
  WriteRgbPlanes(img, augment, dst);
}

bool SampleBuilder::BuildValidation(int64_t index, int height, int width, uint8_t* dst,
                                    std::vector<NormBox>* targets, ImageMeta* meta, SampleError* error) {
  if (!Load(index, /*augment=*/false, error)) return false;
  const Loaded& l = *loaded_[0];
  const LetterboxPlan lb = PlanLetterbox(l.image.cols, l.image.rows, width, height, /*scaleup=*/false);
  std::vector<PixelBox> boxes;
  const bool u8 = ctx_.augmentation == Augmentation::kUltralytics8;
  if (u8) {
    // LetterBox._update_labels: denormalize, scale by r, add_padding(left, top) (the rounded padding, where
    // YOLOv5 shifts by the half padding dw, dh), each step in float32; then Format's targets.
    AppendPixelBoxes(l.boxes, l.image.cols, l.image.rows, 0, 0, &boxes, ctx_.augmentation);
    const float r = static_cast<float>(lb.ratio), left = static_cast<float>(lb.left), top = static_cast<float>(lb.top);
    for (PixelBox& b : boxes) {
      b.x1 = b.x1 * r + left;
      b.y1 = b.y1 * r + top;
      b.x2 = b.x2 * r + left;
      b.y2 = b.y2 * r + top;
    }
    *targets = ToNormalizedAfterFlips(boxes, width, height, false, false);
  } else {
    AppendPixelBoxes(l.boxes, lb.ratio * l.image.cols, lb.ratio * l.image.rows, lb.dw, lb.dh, &boxes);
    *targets = ToNormalized(boxes, width, height);
  }
  *meta = ImageMeta();
  meta->dataset_index = index;
  meta->image_id = l.image_id;
  meta->orig_width = l.orig_w;
  meta->orig_height = l.orig_h;
  meta->ratio_w = lb.ratio * l.image.cols / l.orig_w;
  meta->ratio_h = lb.ratio * l.image.rows / l.orig_h;
  meta->pad_w = u8 ? lb.left : lb.dw;  // Ultralytics 8's ratio_pad holds (left, top)
  meta->pad_h = u8 ? lb.top : lb.dh;
  WriteLetterboxedPlanes(l.image, lb, dst);
  return true;
}

}  // namespace ffyolo
