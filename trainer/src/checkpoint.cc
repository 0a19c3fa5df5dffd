#include "ffyolo/checkpoint.h"

#include <torch/optim/optimizer.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include "ffr/env.h"
#include "ffyolo/torch_compat.h"
#include "zip_integrity.h"

namespace ffyolo {
namespace {

constexpr char kFormat[] = "ffyolo-checkpoint";
constexpr int64_t kVersion = 1;

void WriteModel(torch::serialize::OutputArchive* archive, const std::string& prefix, const YoloModel& model) {
  for (const auto& p : model.named_parameters()) archive->write(prefix + p.key(), p.value().detach().cpu());
  for (const auto& b : model.named_buffers()) archive->write(prefix + b.key(), b.value().cpu(), /*is_buffer=*/true);
}

// Loads by name; every entry of the model must be in the archive.
ffr::Status ReadModel(torch::serialize::InputArchive* archive, const std::string& prefix, YoloModel* model,
                      const std::string& path) {
  torch::NoGradGuard no_grad;
  auto load = [&](const std::string& key, torch::Tensor dst) -> ffr::Status {
    torch::Tensor t;
    if (!archive->try_read(prefix + key, t))
      return ffr::Status::Corruption(path + ": no '" + prefix + key + "' (a checkpoint of another model?)");
    if (t.sizes() != dst.sizes())
      return ffr::Status::Corruption(path + ": '" + prefix + key + "' has shape " + c10::str(t.sizes()) +
                                     ", the model expects " + c10::str(dst.sizes()));
    dst.copy_(t);
    return ffr::Status::OK();
  };
  for (const auto& p : model->named_parameters()) FFR_RETURN_IF_ERROR(load(p.key(), p.value()));
  for (const auto& b : model->named_buffers()) FFR_RETURN_IF_ERROR(load(b.key(), b.value()));
  return ffr::Status::OK();
}

std::string ReadString(torch::serialize::InputArchive& a, const std::string& key) {
  c10::IValue v;
  return a.try_read(key, v) && v.isString() ? v.toStringRef() : std::string();
}

int64_t ReadInt(torch::serialize::InputArchive& a, const std::string& key, int64_t fallback) {
  c10::IValue v;
  return a.try_read(key, v) && v.isInt() ? v.toInt() : fallback;
}

double ReadDouble(torch::serialize::InputArchive& a, const std::string& key, double fallback) {
  c10::IValue v;
  return a.try_read(key, v) && v.isDouble() ? v.toDouble() : fallback;
}

ffr::Status Open(const std::string& path, torch::serialize::InputArchive* archive, CheckpointInfo* info) {
  if (!ffr::Env::Default()->FileExists(path)) return ffr::Status::NotFound(path + ": no such checkpoint");
  std::string bytes;
  FFR_RETURN_IF_ERROR(ffr::ReadFileToString(ffr::Env::Default(), path, &bytes));
  // LibTorch's reader does not check the CRCs its writer records: damaged bytes would load as weights.
  const ffr::Status whole = CheckZipIntegrity(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), path);
  if (!whole.ok()) return ffr::Status::Corruption(whole.message() + ": not a whole checkpoint");
  try {
    archive->load_from(bytes.data(), bytes.size());
  } catch (const c10::Error& e) {
    return ffr::Status::Corruption(path + ": not a readable LibTorch archive: " + e.what_without_backtrace());
  }
  if (ReadString(*archive, "format") != kFormat)
    return ffr::Status::Corruption(path + ": not an ffyolo checkpoint");
  const int64_t version = ReadInt(*archive, "version", 0);
  if (version != kVersion)
    return ffr::Status::NotSupported(path + ": checkpoint version " + std::to_string(version));
  info->epoch = ReadInt(*archive, "epoch", -1);
  info->next_batch = ReadInt(*archive, "next_batch", 0);
  info->best_fitness = ReadDouble(*archive, "best_fitness", 0);
  info->ema_updates = ReadInt(*archive, "ema_updates", 0);
  info->last_opt_step = ReadInt(*archive, "last_opt_step", -1);
  info->loss_scale = ReadDouble(*archive, "loss_scale", 65536);
  info->scale_growth_tracker = ReadInt(*archive, "scale_growth_tracker", 0);
  info->model_yaml = ReadString(*archive, "model_yaml");
  info->nc = ReadInt(*archive, "nc", 0);
  info->opt_yaml = ReadString(*archive, "opt");
  info->hyp_yaml = ReadString(*archive, "hyp");
  info->date = ReadString(*archive, "date");
  return ffr::Status::OK();
}

}  // namespace

ffr::Status SaveCheckpoint(const std::string& path, const CheckpointInfo& info, const YoloModel& model,
                           const YoloModel* ema, const torch::optim::Optimizer* optimizer, ffr::Env* env) {
  std::string data;
  try {
    torch::serialize::OutputArchive archive;
    archive.write("format", c10::IValue(std::string(kFormat)));
    archive.write("version", c10::IValue(kVersion));
    archive.write("epoch", c10::IValue(info.epoch));
    archive.write("next_batch", c10::IValue(info.next_batch));
    archive.write("best_fitness", c10::IValue(info.best_fitness));
    archive.write("ema_updates", c10::IValue(info.ema_updates));
    archive.write("last_opt_step", c10::IValue(info.last_opt_step));
    archive.write("loss_scale", c10::IValue(info.loss_scale));
    archive.write("scale_growth_tracker", c10::IValue(info.scale_growth_tracker));
    archive.write("model_yaml", c10::IValue(info.model_yaml));
    archive.write("nc", c10::IValue(info.nc));
    archive.write("opt", c10::IValue(info.opt_yaml));
    archive.write("hyp", c10::IValue(info.hyp_yaml));
    archive.write("date", c10::IValue(info.date));
    archive.write("torch_version", c10::IValue(std::string(compat::TorchVersion())));
    WriteModel(&archive, "model.", model);
    if (ema) WriteModel(&archive, "ema.", *ema);
    if (optimizer) {
      torch::serialize::OutputArchive opt;
      optimizer->save(opt);
      archive.write("optimizer", opt);
    }
    archive.save_to([&data](const void* bytes, size_t n) {
      data.append(static_cast<const char*>(bytes), n);
      return n;
    });
  } catch (const c10::Error& e) {
    return ffr::Status::IOError(path + ": cannot serialise checkpoint: " + e.what_without_backtrace());
  }
  return ffr::WriteFileAtomically(env, path, data);
}

ffr::Status ReadCheckpointInfo(const std::string& path, CheckpointInfo* info) {
  torch::serialize::InputArchive archive;
  return Open(path, &archive, info);
}

ffr::Status LoadCheckpointModel(const std::string& path, bool prefer_ema, std::shared_ptr<YoloModel>* model,
                                CheckpointInfo* info) {
  torch::serialize::InputArchive archive;
  FFR_RETURN_IF_ERROR(Open(path, &archive, info));
  FFR_RETURN_IF_ERROR(BuildModelFromString(info->model_yaml, path + " (model_yaml)", info->nc, model));
  torch::Tensor probe;
  const bool has_ema = archive.try_read("ema.model.0.conv.weight", probe);
  return ReadModel(&archive, prefer_ema && has_ema ? "ema." : "model.", model->get(), path);
}

ffr::Status LoadCheckpointState(const std::string& path, YoloModel* model, YoloModel* ema,
                                torch::optim::Optimizer* optimizer) {
  torch::serialize::InputArchive archive;
  CheckpointInfo info;
  FFR_RETURN_IF_ERROR(Open(path, &archive, &info));
  FFR_RETURN_IF_ERROR(ReadModel(&archive, "model.", model, path));
  if (ema) FFR_RETURN_IF_ERROR(ReadModel(&archive, "ema.", ema, path));
  if (optimizer) {
    torch::serialize::InputArchive opt;
    if (!archive.try_read("optimizer", opt))
      return ffr::Status::Corruption(path + ": no optimizer state (stripped weights cannot be resumed)");
    try {
      optimizer->load(opt);
    } catch (const c10::Error& e) {
      return ffr::Status::Corruption(path + ": optimizer state does not fit: " + e.what_without_backtrace());
    }
  }
  return ffr::Status::OK();
}

ffr::Status TransferWeights(const std::string& path, YoloModel* model, int64_t* transferred, int64_t* total) {
  torch::serialize::InputArchive archive;
  CheckpointInfo info;
  FFR_RETURN_IF_ERROR(Open(path, &archive, &info));
  torch::Tensor probe;
  const std::string prefix = archive.try_read("ema.model.0.conv.weight", probe) ? "ema." : "model.";
  torch::NoGradGuard no_grad;
  *transferred = *total = 0;
  auto take = [&](const std::string& key, torch::Tensor dst) {
    ++*total;
    torch::Tensor t;
    if (archive.try_read(prefix + key, t) && t.sizes() == dst.sizes()) {
      dst.copy_(t);
      ++*transferred;
    }
  };
  for (const auto& p : model->named_parameters()) take(p.key(), p.value());
  for (const auto& b : model->named_buffers()) take(b.key(), b.value());
  return ffr::Status::OK();
}

}  // namespace ffyolo
