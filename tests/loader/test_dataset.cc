#include "test_dataset.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <stdexcept>

#include "ffyolo/pack.h"
#include "ffyolo/synthetic.h"
#include "testing/test_env.h"

namespace ffyolo::testing {

const std::string& PackedSyntheticDataset(int train, int val) {
  static std::map<std::pair<int, int>, std::string> built;
  auto it = built.find({train, val});
  if (it != built.end()) return it->second;
  const std::string root = testing::BinaryPath("test_scratch/loader_data_" + std::to_string(train) + "_" +
                                                std::to_string(val) + "." + std::to_string(::getpid()));
  testing::RemoveTree(root);
  SyntheticOptions so;
  so.output_dir = root + "/src";
  so.train_images = train;
  so.val_images = val;
  so.min_size = 160;
  so.max_size = 320;
  so.num_threads = 2;
  SyntheticSummary ss;
  ffr::Status s = GenerateSyntheticCoco(so, &ss);
  if (!s.ok()) throw std::runtime_error(s.ToString());
  PackOptions po;
  po.source = so.output_dir;
  po.output = root + "/data.ffr";
  po.shards = 2;
  PackSummary ps;
  s = Pack(po, &ps);
  if (!s.ok()) throw std::runtime_error(s.ToString());
  return built[{train, val}] = po.output;
}

}  // namespace ffyolo::testing
