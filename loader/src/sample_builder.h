// SampleBuilder: one sample as YOLOv5's LoadImagesAndLabels.__getitem__ makes
// it (v7.0), written into its batch slot. One per worker thread: it owns the
// read buffer, the decoders and every scratch image, so that steady state
// allocates nothing.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <opencv2/core.hpp>

#include "ffr/reader.h"
#include "ffyolo/batch.h"
#include "ffyolo/augmentation.h"
#include "ffyolo/boxes.h"
#include "ffyolo/decoded_image_store.h"
#include "ffyolo/hyp.h"
#include "ffyolo/image_decoder.h"
#include "ffyolo/label_index.h"
#include "ffyolo/mosaic_buffer.h"
#include "ffyolo/random.h"

namespace ffyolo {

// What every builder of a loader shares, read-only.
struct SampleContext {
  const ffr::Reader* reader = nullptr;
  std::string split;
  Hyp hyp;
  Ultralytics8Hyp ultralytics8_hyp;
  Augmentation augmentation = Augmentation::kYolov5;
  int img_size = 640;
  bool decode_less = true;
  // Images come out as viewed, their records' EXIF orientations applied (Dataset::ExifApplied).
  bool exif_applied = false;
  // The reader holds a pixel cache (pixel_cache.h): records of load_image's
  // output, used as they are. A cache that fails to read is not a bad sample
  // to replace but a damaged cache: its errors are fatal.
  bool pixel_cache = false;
  // With a pixel cache: one flag per sample, set once its CRC was checked. A
  // cached sample is megabytes that mosaic reads four at a time, so each is
  // checked the first time this process reads it rather than at every read
  // (the reader then checks none).
  std::atomic<bool>* checked = nullptr;
  // Ultralytics 8's mosaic training: images the plan's spans share (the
  // draws' ImageLoad::span) come from here. Null: every read decodes.
  DecodedImageStore* store = nullptr;
  std::atomic<int64_t>* decodes = nullptr;  // counts every decode (DecodeStats::decodes)
};

// Why a sample failed: the dataset index at fault (a mosaic partner, maybe) and the reason.
struct SampleError {
  int64_t index = -1;
  ffr::Status status;
  bool fatal = false;  // no replacement sample can help (a damaged pixel cache)
};

class SampleBuilder {
 public:
  explicit SampleBuilder(const SampleContext& context);
  ~SampleBuilder();

  // A training sample (mosaic with probability hyp.mosaic, else letterbox +
  // random_perspective; then mixup, Ultralytics 8's CutMix, HSV, flips) of
  // img_size x img_size.
  // YOLOv5: `partners` are the indices mosaic and mixup draw from.
  // Ultralytics 8: `draws` names the images instead (mosaic_buffer.h), and a
  // sample without mosaic is warped straight from load_image's output.
  // Writes RGB planes into dst (3 * s * s bytes; Ultralytics 8's bgr may
  // make them B, G, R, as Finish says).
  bool BuildTraining(SampleRandom* rng, int64_t index, const std::vector<int64_t>& partners,
                     const SampleDraws* draws, uint8_t* dst, std::vector<NormBox>* targets, ImageMeta* meta,
                     SampleError* error);

  // A rect training sample (YOLOv5's rect=True with augment: mosaic and mixup
  // off): letterboxed (scaleup on) into its batch's height x width, then
  // random_perspective, HSV and flips. dst: 3 * height * width bytes.
  bool BuildRectTraining(SampleRandom* rng, int64_t index, int height, int width, uint8_t* dst,
                         std::vector<NormBox>* targets, ImageMeta* meta, SampleError* error);

  // load_image alone: sample `index` read, decoded and resized so that its
  // longest side is img_size, with `augment`'s interpolation. *image and
  // *record stay valid until the next call. What a pixel cache stores.
  bool LoadImage(int64_t index, bool augment, cv::Mat* image, const RecordView** record, SampleError* error);

  // A validation sample letterboxed (scaleup off) into height x width.
  bool BuildValidation(int64_t index, int height, int width, uint8_t* dst, std::vector<NormBox>* targets,
                       ImageMeta* meta, SampleError* error);

 private:
  struct Loaded;
  // Reads and parses the records of `indices` into the first `count` Loaded.
  bool Read(const int64_t* indices, int count, SampleError* error);
  // Decodes Loaded k's image and applies load_image's resize. With a
  // non-empty `needed` (in resized pixels; augmenting loads only, whose
  // resize is INTER_LINEAR, see ResizeSourceRegion) only the pixels there are valid.
  bool Decode(int k, bool augment, const cv::Rect& needed, SampleError* error);
  // Loaded k's pixels for an augmenting read: the decoded image store's copy
  // when the sample's plan (planned_) shares the image with other samples, else
  // decoded (only `needed`, when not empty).
  bool Pixels(int k, const cv::Rect& needed, SampleError* error);
  // Read and Decode of one image into Loaded 0.
  bool Load(int64_t index, bool augment, SampleError* error);
  // The mosaic of `index` and three more: YOLOv5 draws them from `partners`
  // and shuffles the four; Ultralytics 8 passes `tiles` (its image in tile 0).
  bool Mosaic(SampleRandom* rng, int64_t index, const std::vector<int64_t>& partners,
              const std::array<int64_t, 3>* tiles, cv::Mat* out, std::vector<PixelBox>* boxes, SampleError* error);
  // The non-mosaic training path into height x width: YOLOv5 letterboxes and
  // then applies random_perspective (border 0); Ultralytics 8's
  // RandomPerspective warps load_image's output, centred, straight into it.
  bool SingleImage(SampleRandom* rng, int64_t index, int height, int width, cv::Mat* out,
                   std::vector<PixelBox>* boxes, ImageMeta* meta, SampleError* error);
  // Ultralytics 8's MixUp or CutMix image into `out` (img_size square), its boxes into mix_boxes_.
  bool MixedIn(SampleRandom* rng, const MixedImage& image, cv::Mat* out, SampleError* error);
  // The end of every training sample: boxes normalized, HSV and flips drawn, RGB planes into dst
  // (Ultralytics 8: then bgr drawn, B, G, R planes when it comes up).
  void Finish(SampleRandom* rng, const cv::Mat& img, const std::vector<PixelBox>& boxes, uint8_t* dst,
              std::vector<NormBox>* targets);

  SampleContext ctx_;
  const SampleDraws* planned_ = nullptr;  // the Ultralytics 8 sample being built, for Pixels
  ffr::ReadBuffer read_buffer_;
  std::vector<std::unique_ptr<Loaded>> loaded_;  // one per mosaic tile
  std::vector<uint8_t> work_buffer_, mix_buffer_;
  std::vector<PixelBox> mix_boxes_;
};

}  // namespace ffyolo
