#include "ffyolo/validator.h"

#include <torch/torch.h>

#include <chrono>

#include "ffyolo/loader.h"
#include "ffyolo/loss.h"
#include "ffyolo/model.h"

namespace ffyolo {

Validator::Validator(const Dataset& dataset, const ValidatorOptions& options, const c10::Device& device)
    : dataset_(dataset), options_(options), device_(device) {}

Validator::~Validator() = default;

const std::vector<std::string>& Validator::names() const { return dataset_.manifest().names; }

LoaderOptions ValidationLoader(const ValidatorOptions& options) {
  LoaderOptions lo;
  lo.split = options.split;
  lo.training = false;
  lo.img_size = options.img_size;
  lo.batch_size = options.batch_size;
  lo.workers = options.workers;
  lo.pixel_cache = options.pixel_cache;
  lo.reader = options.reader;
  lo.single_cls = options.single_cls;
  return lo;
}

ffr::Status Validator::Open(const Dataset& dataset, const ValidatorOptions& options, const c10::Device& device,
                            std::unique_ptr<Validator>* out) {
  std::unique_ptr<Validator> v(new Validator(dataset, options, device));
  FFR_RETURN_IF_ERROR(Loader::Open(dataset, ValidationLoader(options), &v->loader_));
  v->split_ = v->loader_->split();
  FFR_RETURN_IF_ERROR(dataset.LoadLabelIndex(v->split_, &v->index_));
  *out = std::move(v);
  return ffr::Status::OK();
}

ffr::Status Validator::Run(YoloModel& model, const ComputeLoss* loss, bool half, ValidationOutput* out) {
  const auto start = std::chrono::steady_clock::now();
  torch::NoGradGuard no_grad;
  model.eval();
  // val.py's model.half() ... model.float(): a half run leaves the weights rounded to fp16, as train.py's EMA is.
  struct FloatAgain {
    YoloModel& model;
    bool half;
    ~FloatAgain() {
      if (half) model.to(torch::kFloat);
    }
  } float_again{model, half};
  if (half) model.to(torch::kHalf);
  DatasetEvaluator evaluator(dataset_.manifest(), index_, options_.single_cls);
  *out = ValidationOutput();
  torch::Tensor loss_sum = torch::zeros({3});
  int64_t batches = 0;
  FFR_RETURN_IF_ERROR(loader_->Start(0));
  const int64_t total = loader_->batches_per_epoch();
  while (true) {
    const Batch* b = nullptr;
    FFR_RETURN_IF_ERROR(loader_->Next(&b));
    if (!b) break;
    torch::Tensor images =
        torch::from_blob(b->images, {b->size, 3, b->height, b->width}, torch::kUInt8).to(device_);
    images = images.to(half ? torch::kHalf : torch::kFloat).div_(255);
    const DetectOutput pred = model.forward(images);
    if (loss) {
      const torch::Tensor targets =
          torch::from_blob(const_cast<float*>(b->targets.data()), {static_cast<int64_t>(b->num_targets()), 6},
                           torch::kFloat)
              .to(device_);
      std::vector<torch::Tensor> raw;
      for (const auto& r : pred.raw) raw.push_back(r.to(torch::kFloat));
      loss_sum += (*loss)(raw, targets).items.cpu();
    }
    const std::vector<at::Tensor> dets = NonMaxSuppression(pred.decoded.to(torch::kFloat), options_.nms);
    for (int i = 0; i < b->size; ++i) {
      const ImageMeta& m = b->meta[i];
      const torch::Tensor d = dets[i].cpu().to(torch::kDouble).contiguous();
      std::vector<ValPrediction> preds(d.size(0));
      const double* p = d.data_ptr<double>();
      // scale_boxes with ratio_pad: gain = h / h0 (val.py uses the height ratio for both axes).
      const double gain = m.ratio_h;
      for (int64_t k = 0; k < d.size(0); ++k, p += 6) {
        ValPrediction& v = preds[k];
        v.x1 = std::clamp((p[0] - m.pad_w) / gain, 0.0, static_cast<double>(m.orig_width));
        v.y1 = std::clamp((p[1] - m.pad_h) / gain, 0.0, static_cast<double>(m.orig_height));
        v.x2 = std::clamp((p[2] - m.pad_w) / gain, 0.0, static_cast<double>(m.orig_width));
        v.y2 = std::clamp((p[3] - m.pad_h) / gain, 0.0, static_cast<double>(m.orig_height));
        v.conf = p[4];
        v.cls = static_cast<int>(p[5]);
      }
      evaluator.AddImage(static_cast<size_t>(m.dataset_index), preds);
    }
    loader_->Release(b);
    ++batches;
    if (options_.on_progress) options_.on_progress(batches, total);
  }
  out->result = evaluator.Finish();
  out->predictions_json = evaluator.PredictionsJson();
  if (loss && batches > 0)
    for (int k = 0; k < 3; ++k) out->loss[k] = loss_sum[k].item<double>() / batches;
  out->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return ffr::Status::OK();
}

}  // namespace ffyolo
