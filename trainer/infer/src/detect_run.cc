#include "ffyolo/detect_run.h"

#include <strings.h>
#include <torch/torch.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <opencv2/imgproc.hpp>
#ifdef FFYOLO_HAVE_IMGCODECS
#include <opencv2/imgcodecs.hpp>
#endif

#include "ffr/env.h"
#include "ffyolo/batch_grid.h"
#include "ffyolo/box_ops.h"
#include "ffyolo/checkpoint.h"
#include "ffyolo/cpus.h"
#include "ffyolo/device.h"
#include "ffyolo/exif.h"
#include "ffyolo/image_check.h"
#include "ffyolo/image_decoder.h"
#include "ffyolo/letterbox.h"
#include "ffyolo/model.h"
#include "ffyolo/model_config.h"
#include "ffyolo/nms.h"
#include "ffyolo/output/path_overlap.h"
#include "ffyolo/output/run_directory.h"

namespace ffyolo {

const std::vector<std::string> kDetectVideoFormats = {"asf", "avi", "gif", "m4v", "mkv", "mov",
                                                      "mp4", "mpeg", "mpg", "ts", "wmv"};

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// x.split('.')[-1].lower(): the text after the last dot of the whole path.
std::string Suffix(const std::string& path) {
  std::string s = path.substr(path.rfind('.') + 1);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool In(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

std::string FormatList(const std::vector<std::string>& list) {
  std::string s = "(";
  for (size_t i = 0; i < list.size(); ++i) s += (i ? ", '" : "'") + list[i] + "'";
  return s + ")";
}

double Ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

// Two sources saved under one name (a/x.jpg and b/x.jpg; x.jpg and x.png for their labels) would
// leave only the last one's output; detect.py overwrites silently.
ffr::Status NoTwoSourcesSavedAsOne(const std::vector<std::string>& files, bool save_txt, bool save_img) {
  std::map<std::string, std::string> saved;  // output name -> source
  const auto claim = [&](const std::string& name, const std::string& file) {
    const auto [first, inserted] = saved.emplace(name, file);
    if (inserted) return ffr::Status::OK();
    return ffr::Status::InvalidArgument(first->second + " and " + file + " would both be saved as " + name +
                                        ", the second replacing the first; detect them in separate runs");
  };
  for (const std::string& file : files) {
    const fs::path path(file);
    if (save_txt) FFR_RETURN_IF_ERROR(claim("labels/" + path.stem().string() + ".txt", file));
    if (save_img) FFR_RETURN_IF_ERROR(claim(path.filename().string(), file));
  }
  return ffr::Status::OK();
}

// One decoded image waiting for its batch.
struct Pending {
  std::string path;
  int64_t index = 0;
  cv::Mat original;     // BGR, as decoded
  cv::Mat letterboxed;  // BGR, the network input's pixels
};

class DetectRun {
 public:
  DetectRun(const DetectRunOptions& o, DetectObserver* observer, DetectSummary* summary)
      : o_(o), observer_(observer), summary_(summary) {}

  ffr::Status Run();

 private:
  ffr::Status LoadModel();
  // Reads, decodes and letterboxes file `index` (1-based) into *out; a bad file is reported, not returned.
  bool Prepare(const std::string& path, int64_t index, Pending* out);
  ffr::Status Flush();
  ffr::Status Save(const Pending& p, DetectedImage* image);

  const DetectRunOptions& o_;
  DetectObserver* observer_;
  DetectSummary* summary_;
  torch::Device device_{torch::kCPU};
  std::shared_ptr<YoloModel> model_;
  int stride_ = 32;
  int64_t count_ = 0;
  std::vector<Pending> batch_;
  ImageInspector inspector_;
  ImageDecoder decoder_;
  std::unique_ptr<ffr::FileLock> run_lock_;  // the save directory's (HoldRunDirectory), for the run
};

ffr::Status DetectRun::LoadModel() {
  FFR_RETURN_IF_ERROR(SelectDevice(o_.device, /*local_rank=*/-1, &device_));
  if (o_.half && !device_.is_cuda())
    return ffr::Status::InvalidArgument("--half needs a CUDA device (got " + device_.str() + ")");
  at::set_num_threads(o_.threads > 0 ? o_.threads : UsableCpus());
  CheckpointInfo info;
  // attempt_load: the EMA when the file has one, BatchNorm folded into the convolutions.
  FFR_RETURN_IF_ERROR(LoadCheckpointModel(o_.weights, /*prefer_ema=*/true, &model_, &info));
  model_->eval();
  model_->Fuse();
  model_->to(device_);
  if (o_.half) model_->to(torch::kHalf);
  summary_->names = info.names;
  if (static_cast<int64_t>(summary_->names.size()) != model_->nc()) {
    // DetectionModel's default names: the class indices.
    summary_->names.clear();
    for (int64_t c = 0; c < model_->nc(); ++c) summary_->names.push_back(std::to_string(c));
  }
  stride_ = static_cast<int>(*std::max_element(model_->strides().begin(), model_->strides().end()));
  std::string warning;
  FFR_RETURN_IF_ERROR(CheckImgSize(o_.img_size, stride_, &summary_->img_size, &warning));
  if (!warning.empty() && observer_) observer_->OnWarning(warning);
  if (device_.is_cuda()) {  // DetectMultiBackend.warmup: one pass on zeros, CUDA only
    torch::NoGradGuard no_grad;
    model_->forward(torch::zeros({1, 3, summary_->img_size, summary_->img_size},
                                 torch::TensorOptions().device(device_).dtype(o_.half ? torch::kHalf : torch::kFloat)));
  }
  return ffr::Status::OK();
}

bool DetectRun::Prepare(const std::string& path, int64_t index, Pending* out) {
  const auto fail = [&](const ffr::Status& s) {
    ++summary_->failed;
    if (observer_) observer_->OnImageError(s);
    return false;
  };
  if (In(kDetectVideoFormats, Suffix(path)))
    return fail(ffr::Status::NotSupported(path + ": video input is not supported (images only)"));
  std::string bytes;
  ffr::Status s = ffr::ReadFileToString(ffr::Env::Default(), path, &bytes);
  ImageFacts facts;
  if (s.ok()) s = inspector_.Inspect(bytes, path, /*full_decode=*/false, &facts);
  cv::Mat decoded;
  int denominator = 1;
  // As detect.py reads it (cv2.imread): turned by its EXIF orientation (exif.h's ImageExifOrientation).
  DecodeOptions options;
  if (s.ok()) options.orientation = ImageExifOrientation(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (s.ok())
    s = decoder_.Decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), facts.encoding, path, options,
                        &decoded, &denominator);
  if (!s.ok()) return fail(s);
  out->path = path;
  out->index = index;
  out->original = decoded.clone();  // the decoder's buffer is reused by the next image
  const LetterboxPlan plan = PlanLetterbox(decoded.cols, decoded.rows, summary_->img_size, summary_->img_size,
                                           /*scaleup=*/true, /*auto_stride=*/stride_);
  out->letterboxed.create(plan.top + plan.new_h + plan.bottom, plan.left + plan.new_w + plan.right, CV_8UC3);
  ApplyLetterbox(out->original, plan, &out->letterboxed);
  return true;
}

ffr::Status DetectRun::Run() {
  std::vector<std::string> files;
  FFR_RETURN_IF_ERROR(ListDetectSource(o_.source, &files));
  count_ = static_cast<int64_t>(files.size());
  FFR_RETURN_IF_ERROR(NoTwoSourcesSavedAsOne(files, o_.save_txt, o_.save_img));
  // An output must never replace an input: a drawn copy saved onto its source (the save directory is
  // the source's folder, under whatever name) would.
  if (o_.save_img) {
    for (const std::string& f : files) {
      if (PlaceWithin(o_.save_dir + "/" + fs::path(f).filename().string(), f))
        return ffr::Status::InvalidArgument(o_.save_dir + ": the save directory holds the source image " + f +
                                            ", which the drawn copy would replace (choose another --project/--name)");
    }
  }
  // Held only now, its outputs checked: a refused run leaves no folder nor .lock in the user's place.
  FFR_RETURN_IF_ERROR(HoldRunDirectory(ffr::Env::Default(), o_.save_dir, &run_lock_));
  if (o_.save_txt) FFR_RETURN_IF_ERROR(ffr::Env::Default()->CreateDirs(o_.save_dir + "/labels"));
  FFR_RETURN_IF_ERROR(LoadModel());
  for (size_t i = 0; i < files.size(); ++i) {
    Pending p;
    if (!Prepare(files[i], static_cast<int64_t>(i) + 1, &p)) continue;
    if (!batch_.empty() && (batch_.front().letterboxed.size() != p.letterboxed.size() ||
                            static_cast<int>(batch_.size()) >= std::max(1, o_.batch_size)))
      FFR_RETURN_IF_ERROR(Flush());
    batch_.push_back(std::move(p));
  }
  return Flush();
}

ffr::Status DetectRun::Flush() {
  if (batch_.empty()) return ffr::Status::OK();
  const int64_t n = static_cast<int64_t>(batch_.size());
  const int h = batch_.front().letterboxed.rows, w = batch_.front().letterboxed.cols;
  std::vector<at::Tensor> dets;
  double inference_ms = 0;
  try {
    torch::NoGradGuard no_grad;
    std::vector<uint8_t> hwc(static_cast<size_t>(n) * h * w * 3);
    for (int64_t i = 0; i < n; ++i) {
      cv::Mat view(h, w, CV_8UC3, hwc.data() + static_cast<size_t>(i) * h * w * 3);
      batch_[i].letterboxed.copyTo(view);
    }
    const auto sync = [&] {
      if (device_.is_cuda()) torch::cuda::synchronize();
    };
    // LoadImages' HWC BGR -> CHW RGB, then detect.py's from_numpy().to(device), float (or half), / 255.
    Clock::time_point t = Clock::now();
    at::Tensor images = torch::from_blob(hwc.data(), {n, h, w, 3}, torch::kUInt8)
                            .to(device_)
                            .flip({3})
                            .permute({0, 3, 1, 2})
                            .to(o_.half ? torch::kHalf : torch::kFloat)
                            .contiguous()
                            .div_(255);
    sync();
    summary_->preprocess_ms += Ms(t);
    t = Clock::now();
    const at::Tensor pred = model_->forward(images).decoded;
    sync();
    inference_ms = Ms(t);
    summary_->inference_ms += inference_ms;
    t = Clock::now();
    NmsOptions nms;
    nms.conf_thres = o_.conf_thres;
    nms.iou_thres = o_.iou_thres;
    nms.max_det = o_.max_det;
    nms.agnostic = o_.agnostic_nms;
    nms.classes = o_.classes;
    dets = NonMaxSuppression(pred.to(torch::kFloat), nms);
    for (int64_t i = 0; i < n; ++i) {
      // scale_boxes(im.shape[2:], det[:, :4], im0.shape).round(): back to the original, clipped, whole pixels.
      const at::Tensor boxes = ScaleBoxes(h, w, dets[i].narrow(1, 0, 4), batch_[i].original.rows,
                                          batch_[i].original.cols)
                                   .round();
      dets[i] = torch::cat({boxes, dets[i].narrow(1, 4, 2)}, 1).cpu().contiguous();
    }
    sync();
    summary_->nms_ms += Ms(t);
  } catch (const c10::Error& e) {
    return ffr::Status::Aborted(batch_.front().path + ": inference failed: " + e.what_without_backtrace());
  }
  for (int64_t i = 0; i < n; ++i) {
    DetectedImage image;
    image.path = batch_[i].path;
    image.index = batch_[i].index;
    image.count = count_;
    image.input_h = h;
    image.input_w = w;
    image.width = batch_[i].original.cols;
    image.height = batch_[i].original.rows;
    image.inference_ms = inference_ms / n;
    const float* row = dets[i].data_ptr<float>();
    for (int64_t k = 0; k < dets[i].size(0); ++k, row += 6)
      image.boxes.push_back({row[0], row[1], row[2], row[3], row[4], static_cast<int>(row[5])});
    FFR_RETURN_IF_ERROR(Save(batch_[i], &image));
    ++summary_->images;
    if (observer_) observer_->OnImage(image);
  }
  batch_.clear();
  return ffr::Status::OK();
}

ffr::Status DetectRun::Save(const Pending& p, DetectedImage* image) {
  const fs::path path(p.path);
  if (o_.save_txt && !image->boxes.empty()) {
    std::string text;
    // detect.py appends them in reversed(det) order: least confident first.
    for (auto it = image->boxes.rbegin(); it != image->boxes.rend(); ++it)
      text += DetectLabelLine(*it, image->width, image->height, o_.save_conf) + "\n";
    image->saved_labels = o_.save_dir + "/labels/" + path.stem().string() + ".txt";
    FFR_RETURN_IF_ERROR(ffr::WriteFileAtomically(ffr::Env::Default(), image->saved_labels, text));
  }
  if (!o_.save_img) return ffr::Status::OK();
  cv::Mat drawn = p.original.clone();
  for (auto it = image->boxes.rbegin(); it != image->boxes.rend(); ++it) {
    std::string label;
    if (!o_.hide_labels) {
      label = summary_->names[it->cls];
      if (!o_.hide_conf) {
        char conf[16];
        std::snprintf(conf, sizeof(conf), " %.2f", it->conf);
        label += conf;
      }
    }
    DrawBoxLabel(&drawn, cv::Point(static_cast<int>(it->x1), static_cast<int>(it->y1)),
                 cv::Point(static_cast<int>(it->x2), static_cast<int>(it->y2)), ClassColor(it->cls), label,
                 o_.line_thickness, o_.line_thickness / 3.0);
  }
  // cv2.imwrite(save_dir / p.name): JPEG through TurboJPEG at imwrite's quality 95; other formats by
  // OpenCV when the build has its codecs, else as JPEG under the name with .jpg appended.
  const std::string ext = Suffix(path.filename().string());
  image->saved_image = o_.save_dir + "/" + path.filename().string();
  if (ext == "jpg" || ext == "jpeg") return WriteJpeg(drawn, image->saved_image, 95);
#ifdef FFYOLO_HAVE_IMGCODECS
  std::vector<uchar> encoded;
  bool encoded_ok = false;
  try {
    encoded_ok = cv::imencode("." + ext, drawn, encoded);
  } catch (const cv::Exception&) {  // no encoder for this extension
  }
  if (encoded_ok)
    return ffr::WriteFileAtomically(ffr::Env::Default(), image->saved_image,
                                    std::string(encoded.begin(), encoded.end()));
#endif
  image->saved_image += ".jpg";
  return WriteJpeg(drawn, image->saved_image, 95);
}

// What detect.py reads besides files, folders and .txt lists; ffyolo does not.
ffr::Status NotAFileSource(const std::string& source) {
  for (const char* scheme : {"http://", "https://", "rtsp://", "rtmp://"})
    if (strncasecmp(source.c_str(), scheme, std::strlen(scheme)) == 0)
      return ffr::Status::NotSupported(source + ": URL sources are not supported; download the file first");
  if (source.find_first_of("*?[") != std::string::npos && !fs::exists(source))
    return ffr::Status::NotSupported(source + ": glob patterns are not supported; pass the folder, or a .txt "
                                              "file listing the images");
  if (!source.empty() && std::all_of(source.begin(), source.end(), [](unsigned char c) { return std::isdigit(c); }) &&
      !fs::exists(source))
    return ffr::Status::NotSupported(source + ": webcam sources are not supported");
  return ffr::Status::OK();
}

}  // namespace

ffr::Status ListDetectSource(const std::string& source, std::vector<std::string>* files) {
  files->clear();
  FFR_RETURN_IF_ERROR(NotAFileSource(source));
  std::vector<std::string> paths{source};
  if (fs::path(source).extension() == ".txt") {
    std::string text;
    FFR_RETURN_IF_ERROR(ffr::ReadFileToString(ffr::Env::Default(), source, &text));
    paths.clear();
    size_t pos = 0;
    while ((pos = text.find_first_not_of(" \t\n\r\f\v", pos)) != std::string::npos) {
      const size_t end = text.find_first_of(" \t\n\r\f\v", pos);
      paths.push_back(text.substr(pos, end - pos));
      pos = end;
    }
    std::sort(paths.begin(), paths.end());
  }
  std::vector<std::string> all;
  std::string last = source;
  for (const std::string& p : paths) {
    std::error_code ec;
    const std::string resolved = fs::weakly_canonical(fs::absolute(p, ec), ec).string();
    if (ec)  // a loop of links, a name too long: resolved is empty
      return ffr::Status::InvalidArgument(p + ": cannot resolve the path: " + ec.message() +
                                          (p == source ? "" : " (listed in " + source + ")"));
    last = resolved;
    if (fs::is_directory(resolved, ec)) {
      std::vector<std::string> listed;
      for (fs::directory_iterator it(resolved, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name[0] != '.' && name.find('.') != std::string::npos) listed.push_back(it->path().string());
      }
      if (ec) return ffr::Status::IOError(resolved + ": cannot list: " + ec.message());
      std::sort(listed.begin(), listed.end());
      all.insert(all.end(), listed.begin(), listed.end());
    } else if (fs::is_regular_file(resolved, ec)) {
      all.push_back(resolved);
    } else if (fs::exists(resolved, ec)) {
      return ffr::Status::InvalidArgument(resolved + " is not a regular file nor a folder" +
                                          (p == source ? "" : " (listed in " + source + ")"));
    } else {
      return ffr::Status::NotFound(resolved + " does not exist" + (p == source ? "" : " (listed in " + source + ")"));
    }
  }
  for (const std::string& f : all)
    if (In(kImageFormats, Suffix(f))) files->push_back(f);
  for (const std::string& f : all)
    if (In(kDetectVideoFormats, Suffix(f))) files->push_back(f);
  if (files->empty())
    return ffr::Status::InvalidArgument("No images or videos found in " + last + ". Supported formats are:\nimages: " +
                                        FormatList(kImageFormats) +
                                        "\nvideos: " + FormatList(kDetectVideoFormats));
  return ffr::Status::OK();
}

ffr::Status RunDetect(const DetectRunOptions& options, DetectObserver* observer, DetectSummary* summary) {
  *summary = DetectSummary();
  return DetectRun(options, observer, summary).Run();
}

std::string DetectLabelLine(const DetectBox& box, int width, int height, bool save_conf) {
  // xyxy2xywh(...) / gn in float32, then '%g' of each value.
  const float w = static_cast<float>(width), h = static_cast<float>(height);
  const float xywh[4] = {(box.x1 + box.x2) / 2 / w, (box.y1 + box.y2) / 2 / h, (box.x2 - box.x1) / w,
                         (box.y2 - box.y1) / h};
  char line[160];
  int n = std::snprintf(line, sizeof(line), "%g %g %g %g %g", static_cast<double>(box.cls),
                        static_cast<double>(xywh[0]), static_cast<double>(xywh[1]), static_cast<double>(xywh[2]),
                        static_cast<double>(xywh[3]));
  if (save_conf) std::snprintf(line + n, sizeof(line) - n, " %g", static_cast<double>(box.conf));
  return line;
}

}  // namespace ffyolo
