// What `yolo-detect` does, behind a torch-free interface: YOLOv5 v7.0's
// detect.py on image files. LoadImages' file list and letterbox (auto=True:
// padded only to the stride), the fused model, non_max_suppression,
// scale_boxes back to each original image (rounded and clipped), then the
// boxes drawn into a copy of the image and written as YOLO labels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ffr/status.h"

namespace ffyolo {

// detect.py's VID_FORMATS (utils/dataloaders.py), lower case without the dot; its IMG_FORMATS are
// kImageFormats (image_check.h).
extern const std::vector<std::string> kDetectVideoFormats;

// LoadImages' files for `source`: a .txt file names one path per
// whitespace-separated token (the tokens sorted); each path, made absolute
// with its links resolved, is a directory (its files with a dot in the name,
// hidden ones left out, sorted) or a file. The images come first, then the
// videos (which yolo-detect reports as unsupported, one by one). NotFound for
// a path that does not exist, InvalidArgument when nothing has an image or
// video extension.
ffr::Status ListDetectSource(const std::string& source, std::vector<std::string>* files);

struct DetectRunOptions {
  std::string weights;  // an ffyolo checkpoint or imported Ultralytics weights
  std::string source;   // ListDetectSource's
  // Images go here, labels to save_dir/labels/; made and held by the run (HoldRunDirectory) once the
  // sources are checked against it.
  std::string save_dir;
  std::string device;    // --device (device.h)
  int img_size = 640;    // rounded up to the model's largest stride
  // Up to this many consecutive images whose letterboxed inputs have the same
  // shape share a forward pass; each image's input is what detect.py's batch of
  // one would be, so the boxes do not depend on it.
  int batch_size = 1;
  int threads = 0;  // torch threads, 0: all usable CPUs
  double conf_thres = 0.25;
  double iou_thres = 0.45;
  int max_det = 1000;
  std::vector<int64_t> classes;  // empty: all
  bool agnostic_nms = false;
  bool half = false;  // fp16 inference, CUDA only
  bool save_img = true;
  bool save_txt = false;
  bool save_conf = false;
  int line_thickness = 3;
  bool hide_labels = false;
  bool hide_conf = false;
};

// A box in the original image's pixels: rounded, clipped to the image.
struct DetectBox {
  float x1 = 0, y1 = 0, x2 = 0, y2 = 0;
  float conf = 0;
  int cls = 0;
};

struct DetectedImage {
  std::string path;  // as listed
  int64_t index = 0, count = 0;  // 1-based position among all listed files
  int input_h = 0, input_w = 0;  // the letterboxed network input
  int width = 0, height = 0;     // the original image
  std::vector<DetectBox> boxes;  // by decreasing confidence
  double inference_ms = 0;       // its share of its batch's forward pass
  std::string saved_image;       // where the drawn copy went ("" when not saved)
  std::string saved_labels;      // its labels file ("" when none was written)
};

// Called in file order, from the calling thread.
class DetectObserver {
 public:
  virtual ~DetectObserver() = default;
  virtual void OnWarning(const std::string& message) {}
  virtual void OnImage(const DetectedImage& image) {}
  // A file that could not be read or decoded: it is skipped and the run goes on.
  virtual void OnImageError(const ffr::Status& error) {}
};

struct DetectSummary {
  std::vector<std::string> names;  // the model's class names
  int img_size = 0;                // after rounding to the stride
  int64_t images = 0;              // detected
  int64_t failed = 0;              // reported to OnImageError
  // Totals over the images, as detect.py's three Profile()s time them: the
  // input tensor (to the device, to float, / 255), the forward pass, NMS.
  // Reading, decoding and letterboxing (LoadImages' work) are outside them.
  double preprocess_ms = 0, inference_ms = 0, nms_ms = 0;
};

// Runs the detection. An error of the weights, the source, the device or of
// writing output ends the run; undecodable files do not (summary->failed).
ffr::Status RunDetect(const DetectRunOptions& options, DetectObserver* observer, DetectSummary* summary);

// save_txt's line: `cls xc yc w h [conf]` normalized to the image, each
// number '%g', as detect.py computes it in float32 from the rounded box.
std::string DetectLabelLine(const DetectBox& box, int width, int height, bool save_conf);

}  // namespace ffyolo
