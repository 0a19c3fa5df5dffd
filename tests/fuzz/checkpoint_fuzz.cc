// The checkpoint reader past its zip check. The input is the list of a
// checkpoint's zip entries (data.pkl, the tensors' data/N, version, the
// TorchScript code/ files); the target wraps them into a zip archive with
// correct CRC-32s, so that CheckZipIntegrity passes and what the fuzzer
// mutates reaches LibTorch's archive reader and unpickler and ffyolo's
// checkpoint code. Every reader of checkpoints then runs on it: the metadata,
// the model rebuilt from it, a resume (model, EMA, SGD state) into the seeds'
// model, and a --weights transfer.
//
// Input: checkpoint_input.h's list of entries; tests/fuzz/checkpoint_entries.py
// turns a checkpoint into one.
//
// LibTorch is Debian's build (g++, uninstrumented): only ffyolo's code gives
// coverage feedback, and ASan sees LibTorch's heap only through malloc/free.
// LibTorch 1.13 leaks miniz's reader state when PyTorchStreamReader's
// constructor throws on a bad archive; checkpoint_fuzz.lsan says why leaks
// allocated inside LibTorch are not reported.
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <torch/utils.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "ffyolo/checkpoint.h"
#include "ffyolo/hyp.h"
#include "ffyolo/model.h"
#include "ffyolo/train_step.h"
#include "checkpoint_input.h"
#include "temp_tree.h"

namespace {

struct Target {
  TempTree tree{"checkpoint_fuzz", {}};
  std::shared_ptr<ffyolo::YoloModel> model, ema;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
};

Target* target = nullptr;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  torch::set_num_threads(1);
  target = new Target;
  std::ifstream f(CHECKPOINT_FUZZ_MODEL);
  std::stringstream yaml;
  yaml << f.rdbuf();
  if (!ffyolo::BuildModelFromString(yaml.str(), CHECKPOINT_FUZZ_MODEL, 0, &target->model).ok() ||
      !ffyolo::BuildModelFromString(yaml.str(), CHECKPOINT_FUZZ_MODEL, 0, &target->ema).ok())
    std::abort();
  std::string description;
  if (!ffyolo::MakeOptimizer(*target->model, "SGD", ffyolo::Hyp(), 0.0005, &target->optimizer, &description).ok())
    std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = target->tree.root() + "/last.pt";
  target->tree.Write("last.pt", checkpoint_input::Zip(checkpoint_input::Entries(data, size)));
  // Each call opens the file anew, as the tools do; LoadCheckpointModel's opening is ReadCheckpointInfo.
  ffyolo::CheckpointInfo info;
  std::shared_ptr<ffyolo::YoloModel> model;
  ffyolo::LoadCheckpointModel(path, /*prefer_ema=*/true, &model, &info);
  ffyolo::LoadCheckpointState(path, target->model.get(), target->ema.get(), target->optimizer.get());
  int64_t transferred = 0, total = 0;
  ffyolo::TransferWeights(path, /*exclude_anchors=*/false, target->model.get(), &transferred, &total);
  return 0;
}
