#include "ffyolo/checkpoint.h"

#include <torch/optim/optimizer.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <cctype>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "ffr/env.h"
#include "ffyolo/exception_status.h"
#include "ffyolo/torch_compat.h"
#include "pickle_check.h"
#include "torchscript_check.h"
#include "zip_integrity.h"

namespace ffyolo {
namespace {

constexpr char kFormat[] = "ffyolo-checkpoint";
constexpr int64_t kVersion = 1;
constexpr char kImportFormat[] = "ffyolo-ultralytics-weights";  // scripts/ultralytics_weights.py
constexpr int64_t kImportVersion = 1;

void WriteModel(torch::serialize::OutputArchive* archive, const std::string& prefix, const YoloModel& model) {
  for (const auto& p : model.named_parameters()) archive->write(prefix + p.key(), p.value().detach().cpu());
  for (const auto& b : model.named_buffers()) archive->write(prefix + b.key(), b.value().cpu(), /*is_buffer=*/true);
}

std::string ReadString(torch::serialize::InputArchive& a, const std::string& key) {
  c10::IValue v;
  return a.try_read(key, v) && v.isString() ? v.toStringRef() : std::string();
}

int64_t ReadInt(torch::serialize::InputArchive& a, const std::string& key, int64_t fallback) {
  c10::IValue v;
  return a.try_read(key, v) && v.isInt() ? v.toInt() : fallback;
}

// A list of strings (class names); anything else reads as none.
std::vector<std::string> StringList(const c10::IValue& v) {
  std::vector<std::string> out;
  if (!v.isList()) return out;
  for (const c10::IValue& e : v.toListRef()) {
    if (!e.isString()) return {};
    out.push_back(e.toStringRef());
  }
  return out;
}

double ReadDouble(torch::serialize::InputArchive& a, const std::string& key, double fallback) {
  c10::IValue v;
  return a.try_read(key, v) && v.isDouble() ? v.toDouble() : fallback;
}

// What a file that is no weights file ffyolo reads is told, with the way to convert an Ultralytics .pt.
std::string NeitherKind(const std::string& path) {
  return path + ": neither an ffyolo checkpoint nor imported Ultralytics weights (convert an Ultralytics .pt with "
                "scripts/ultralytics_weights.py import)";
}

// LibTorch's reader does not check the CRCs its writer records: damaged bytes would load as weights.
// Nor does it doubt what it reads: its TorchScript compiler sees no code but attribute declarations
// (torchscript_check.h), its unpickler no pickle that pickle_check.h refuses.
ffr::Status CheckWhatLibTorchReads(const std::string& path, const std::string& bytes) {
  const auto ends_with = [](const std::string& s, std::string_view end) {
    return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
  };
  const auto is_code = [&](const std::string& name) {
    return name.find("/code/") != std::string::npos && ends_with(name, ".py");
  };
  const auto is_pickle = [&](const std::string& name) { return ends_with(name, ".pkl") || ends_with(name, "_pkl"); };
  std::vector<ZipEntry> entries;
  const ffr::Status whole = CheckZipIntegrity(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), path,
                                              &entries, [&](const std::string& name) {
                                                return is_code(name) || is_pickle(name);
                                              });
  if (!whole.ok()) return ffr::Status::Corruption(whole.message() + ": not a whole checkpoint");
  std::unordered_map<std::string, uint64_t> sizes;
  for (const ZipEntry& e : entries) sizes.emplace(e.name, e.size);
  const RecordSize record_size = [&](const std::string& name) -> std::optional<uint64_t> {
    const auto it = sizes.find(name);
    return it == sizes.end() ? std::nullopt : std::optional<uint64_t>(it->second);
  };
  for (const ZipEntry& e : entries) {
    if (is_pickle(e.name)) {
      // What LibTorch and torch.save write for tensors passes: anything else (an Ultralytics .pt's
      // pickled classes, crafted bytes) is no weights file ffyolo reads.
      const ffr::Status s = CheckPickle(e.contents, e.name, record_size);
      if (!s.ok()) return ffr::Status::Corruption(NeitherKind(path) + ": " + s.message());
    } else if (std::string_view bad_line; is_code(e.name) && !IsAttributeOnlyCode(e.contents, &bad_line)) {
      std::string shown;
      for (const char c : bad_line.substr(0, 60)) shown += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
      return ffr::Status::Corruption(path + ": '" + e.name + "' is TorchScript code an ffyolo checkpoint does not hold (\"" +
                                     shown + "\")");
    }
  }
  return ffr::Status::OK();
}

// A weights file of either kind, its tensors looked up by "model.<key>" / "ema.<key>": an ffyolo
// checkpoint (a LibTorch archive) or Ultralytics weights written by scripts/ultralytics_weights.py
// import (a torch.save'd dict, which LibTorch 1.13 and 2.x read with pickle_load).
class WeightsFile {
 public:
  ffr::Status Open(const std::string& path, CheckpointInfo* info);

  bool Read(const std::string& key, torch::Tensor* t) {
    if (!imported_) return archive_.try_read(key, *t);
    auto it = tensors_.find(key);
    if (it == tensors_.end()) return false;
    *t = it->second;
    return true;
  }
  bool HasEma() {
    torch::Tensor probe;
    return Read("ema.model.0.conv.weight", &probe);
  }
  bool imported() const { return imported_; }
  torch::serialize::InputArchive& archive() { return archive_; }

 private:
  ffr::Status OpenImported(const std::string& path, const std::string& bytes, CheckpointInfo* info);

  torch::serialize::InputArchive archive_;
  bool imported_ = false;
  std::unordered_map<std::string, torch::Tensor> tensors_;
};

ffr::Status WeightsFile::Open(const std::string& path, CheckpointInfo* info) {
  if (!ffr::Env::Default()->FileExists(path)) return ffr::Status::NotFound(path + ": no such checkpoint");
  std::string bytes;
  FFR_RETURN_IF_ERROR(ffr::ReadFileToString(ffr::Env::Default(), path, &bytes));
  FFR_RETURN_IF_ERROR(CheckWhatLibTorchReads(path, bytes));
  try {
    archive_.load_from(bytes.data(), bytes.size());
  } catch (const c10::Error&) {
    return OpenImported(path, bytes, info);  // not a LibTorch archive: a torch.save file at best
  }
  if (ReadString(archive_, "format") != kFormat)
    return ffr::Status::Corruption(path + ": not an ffyolo checkpoint");
  const int64_t version = ReadInt(archive_, "version", 0);
  if (version != kVersion)
    return ffr::Status::NotSupported(path + ": checkpoint version " + std::to_string(version));
  info->epoch = ReadInt(archive_, "epoch", -1);
  info->next_batch = ReadInt(archive_, "next_batch", 0);
  info->best_fitness = ReadDouble(archive_, "best_fitness", 0);
  info->ema_updates = ReadInt(archive_, "ema_updates", 0);
  info->last_opt_step = ReadInt(archive_, "last_opt_step", -1);
  info->loss_scale = ReadDouble(archive_, "loss_scale", 65536);
  info->scale_growth_tracker = ReadInt(archive_, "scale_growth_tracker", 0);
  info->model_yaml = ReadString(archive_, "model_yaml");
  info->nc = ReadInt(archive_, "nc", 0);
  if (c10::IValue names; archive_.try_read("names", names)) info->names = StringList(names);
  info->opt_yaml = ReadString(archive_, "opt");
  info->hyp_yaml = ReadString(archive_, "hyp");
  info->date = ReadString(archive_, "date");
  if (torch::Tensor loss; archive_.try_read("epoch_loss", loss)) {
    loss = loss.to(torch::kDouble).contiguous();
    info->epoch_loss.assign(loss.data_ptr<double>(), loss.data_ptr<double>() + loss.numel());
  }
  torch::Tensor maps;
  if (archive_.try_read("maps", maps)) {
    maps = maps.to(torch::kDouble).contiguous();
    info->maps.assign(maps.data_ptr<double>(), maps.data_ptr<double>() + maps.numel());
  }
  return ffr::Status::OK();
}

ffr::Status WeightsFile::OpenImported(const std::string& path, const std::string& bytes, CheckpointInfo* info) {
  const std::string not_ours = NeitherKind(path);
  c10::IValue root;
  try {
    root = torch::pickle_load(std::vector<char>(bytes.begin(), bytes.end()));
  } catch (const c10::Error& e) {  // an Ultralytics .pt itself ends here: its classes are Python code
    return ffr::Status::Corruption(not_ours + ": " + e.what_without_backtrace());
  }
  if (!root.isGenericDict()) return ffr::Status::Corruption(not_ours);
  const c10::Dict<c10::IValue, c10::IValue> dict = root.toGenericDict();
  auto get = [&](const char* key) {
    auto it = dict.find(c10::IValue(std::string(key)));
    return it == dict.end() ? c10::IValue() : it->value();
  };
  if (!get("format").isString() || get("format").toStringRef() != kImportFormat)
    return ffr::Status::Corruption(not_ours);
  if (!get("version").isInt() || get("version").toInt() != kImportVersion)
    return ffr::Status::NotSupported(path + ": imported weights of another version (re-run "
                                     "scripts/ultralytics_weights.py import)");
  if (!get("model_yaml").isString() || !get("nc").isInt())
    return ffr::Status::Corruption(path + ": imported weights without model_yaml and nc");
  for (const auto& entry : dict) {
    if (!entry.key().isString() || !entry.value().isTensor()) continue;
    tensors_.emplace(entry.key().toStringRef(), entry.value().toTensor());
  }
  imported_ = true;
  *info = CheckpointInfo();  // epoch -1: nothing to resume
  info->model_yaml = get("model_yaml").toStringRef();
  info->nc = get("nc").toInt();
  info->names = StringList(get("names"));
  return ffr::Status::OK();
}

// Runs a reader of `path`. A file that passed the zip check can still hold what
// LibTorch does not expect (TorchScript code that does not compile throws
// torch::jit::ErrorReport, no c10::Error; a record of the wrong kind or size):
// any exception is a Corruption naming the file, with the first line of what
// LibTorch said (an ErrorReport's next lines quote the code).
template <class Body>
ffr::Status Reading(const std::string& path, Body&& body) {
  try {
    return body();
  } catch (...) {
    std::string what = StatusFromException(std::current_exception()).message();
    what.erase(0, what.find_first_not_of("\n "));
    what.erase(std::min(what.find('\n'), what.size()));
    return ffr::Status::Corruption(path + ": not a whole checkpoint: " + what);
  }
}

// Loads by name; every entry of the model must be in the file.
ffr::Status ReadModel(WeightsFile* file, const std::string& prefix, YoloModel* model, const std::string& path) {
  torch::NoGradGuard no_grad;
  auto load = [&](const std::string& key, torch::Tensor dst) -> ffr::Status {
    torch::Tensor t;
    if (!file->Read(prefix + key, &t))
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
    if (!info.names.empty()) archive.write("names", c10::IValue(c10::List<std::string>(info.names)));
    archive.write("opt", c10::IValue(info.opt_yaml));
    archive.write("hyp", c10::IValue(info.hyp_yaml));
    archive.write("date", c10::IValue(info.date));
    if (!info.maps.empty()) archive.write("maps", torch::tensor(info.maps, torch::kDouble));
    if (!info.epoch_loss.empty()) archive.write("epoch_loss", torch::tensor(info.epoch_loss, torch::kDouble));
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
  return Reading(path, [&] {
    WeightsFile file;
    return file.Open(path, info);
  });
}

ffr::Status LoadCheckpointModel(const std::string& path, bool prefer_ema, std::shared_ptr<YoloModel>* model,
                                CheckpointInfo* info) {
  return Reading(path, [&] {
    WeightsFile file;
    FFR_RETURN_IF_ERROR(file.Open(path, info));
    FFR_RETURN_IF_ERROR(BuildModelFromString(info->model_yaml, path + " (model_yaml)", info->nc, model));
    return ReadModel(&file, prefer_ema && file.HasEma() ? "ema." : "model.", model->get(), path);
  });
}

ffr::Status LoadCheckpointState(const std::string& path, YoloModel* model, YoloModel* ema,
                                torch::optim::Optimizer* optimizer) {
  return Reading(path, [&] {
    WeightsFile file;
    CheckpointInfo info;
    FFR_RETURN_IF_ERROR(file.Open(path, &info));
    if (file.imported()) return ffr::Status::InvalidArgument(path + ": imported weights cannot be resumed");
    FFR_RETURN_IF_ERROR(ReadModel(&file, "model.", model, path));
    if (ema) FFR_RETURN_IF_ERROR(ReadModel(&file, "ema.", ema, path));
    if (optimizer) {
      torch::serialize::InputArchive opt;
      if (!file.archive().try_read("optimizer", opt))
        return ffr::Status::Corruption(path + ": no optimizer state (stripped weights cannot be resumed)");
      try {
        optimizer->load(opt);
      } catch (const c10::Error& e) {
        return ffr::Status::Corruption(path + ": optimizer state does not fit: " + e.what_without_backtrace());
      }
    }
    return ffr::Status::OK();
  });
}

ffr::Status TransferWeights(const std::string& path, bool exclude_anchors, YoloModel* model,
                            int64_t* transferred, int64_t* total) {
  return Reading(path, [&] {
    WeightsFile file;
    CheckpointInfo info;
    FFR_RETURN_IF_ERROR(file.Open(path, &info));
    // An ffyolo checkpoint's EMA is what it validated; imported weights give 'model', as train.py takes.
    const std::string prefix = !file.imported() && file.HasEma() ? "ema." : "model.";
    torch::NoGradGuard no_grad;
    *transferred = *total = 0;
    auto take = [&](const std::string& key, torch::Tensor dst) {
      ++*total;
      // intersect_dicts(exclude=['anchor']) drops every key containing "anchor".
      if (exclude_anchors && key.find("anchor") != std::string::npos) return;
      torch::Tensor t;
      if (file.Read(prefix + key, &t) && t.sizes() == dst.sizes()) {
        dst.copy_(t);
        ++*transferred;
      }
    };
    for (const auto& p : model->named_parameters()) take(p.key(), p.value());
    for (const auto& b : model->named_buffers()) take(b.key(), b.value());
    return ffr::Status::OK();
  });
}

}  // namespace ffyolo
