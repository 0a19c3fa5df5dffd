#include "ffyolo/manifest.h"

#include <yaml-cpp/yaml.h>

#include <cinttypes>
#include <cstdio>
#include <set>

#include "ffyolo/yaml_parse.h"

namespace ffyolo {

const SplitInfo* Manifest::FindSplit(const std::string& name) const {
  for (const SplitInfo& s : splits)
    if (s.name == name) return &s;
  return nullptr;
}

Status CheckSplitName(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.find_first_of("/+,") != std::string::npos)
    return Status::InvalidArgument("'" + name + "' cannot be a split's name ('/', '+' and ',' cannot be in it)");
  return Status::OK();
}

Status ShardInfo::CheckSize(const std::string& path, uint64_t file_size) const {
  if (bytes == 0 || file_size == bytes) return Status::OK();
  return Status::Corruption(path + ": " + std::to_string(file_size) + " bytes, the manifest lists " +
                            std::to_string(bytes) + (file_size < bytes ? " (truncated)" : "") +
                            ": a damaged shard, or another pack's");
}

namespace {

// "<path>: its <what> is 1a2b3c4d, the manifest lists 5e6f7a8b: <cause>".
Status CrcMismatch(const std::string& path, const char* what, uint32_t found, uint32_t listed,
                   const char* cause) {
  char hex[48];
  std::snprintf(hex, sizeof(hex), "%08" PRIx32 ", the manifest lists %08" PRIx32, found, listed);
  return Status::Corruption(path + ": its " + what + " is " + hex + ": " + cause);
}

}  // namespace

Status ShardInfo::CheckHeader(const std::string& path, uint32_t file_meta_crc) const {
  if (meta_crc == 0 || file_meta_crc == meta_crc) return Status::OK();
  return CrcMismatch(path, "header's CRC", file_meta_crc, meta_crc,
                     "another pack's shard of as many samples, or a damaged header");
}

Status SplitInfo::CheckLabelIndex(const std::string& path, uint32_t file_crc) const {
  if (label_index_crc == 0 || file_crc == label_index_crc) return Status::OK();
  return CrcMismatch(path, "CRC", file_crc, label_index_crc, "another pack's label index, or a damaged one");
}

std::string Manifest::ToYaml() const {
  YAML::Emitter e;
  e << YAML::BeginMap;
  e << YAML::Key << "format" << YAML::Value << "ffyolo-dataset";
  e << YAML::Key << "version" << YAML::Value << version;
  e << YAML::Key << "created" << YAML::Value << created;
  e << YAML::Key << "source" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "path" << YAML::Value << source;
  e << YAML::Key << "layout" << YAML::Value << source_layout;
  e << YAML::EndMap;
  e << YAML::Key << "nc" << YAML::Value << names.size();
  e << YAML::Key << "names" << YAML::Value << YAML::Flow << names;
  e << YAML::Key << "category_ids" << YAML::Value << YAML::Flow << category_ids;
  e << YAML::Key << "splits" << YAML::Value << YAML::BeginMap;
  for (const SplitInfo& s : splits) {
    e << YAML::Key << s.name << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "samples" << YAML::Value << s.samples;
    e << YAML::Key << "boxes" << YAML::Value << s.boxes;
    e << YAML::Key << "crowd_boxes" << YAML::Value << s.crowd_boxes;
    e << YAML::Key << "background" << YAML::Value << s.background;
    e << YAML::Key << "skipped" << YAML::Value << s.skipped;
    if (s.exif_oriented >= 0) e << YAML::Key << "exif_oriented" << YAML::Value << s.exif_oriented;
    if (s.exif_applied) e << YAML::Key << "exif_applied" << YAML::Value << true;
    e << YAML::Key << "bytes" << YAML::Value << s.bytes;
    e << YAML::Key << "label_index" << YAML::Value << s.label_index;
    if (s.label_index_crc != 0) e << YAML::Key << "label_index_crc" << YAML::Value << s.label_index_crc;
    e << YAML::Key << "shards" << YAML::Value << YAML::BeginSeq;
    for (const ShardInfo& sh : s.shards) {
      e << YAML::Flow << YAML::BeginMap << YAML::Key << "file" << YAML::Value << sh.file << YAML::Key << "samples"
        << YAML::Value << sh.samples << YAML::Key << "bytes" << YAML::Value << sh.bytes;
      if (sh.meta_crc != 0) e << YAML::Key << "meta_crc" << YAML::Value << sh.meta_crc;
      e << YAML::EndMap;
    }
    e << YAML::EndSeq << YAML::EndMap;
  }
  e << YAML::EndMap;
  if (!train.empty()) e << YAML::Key << "train" << YAML::Value << YAML::Flow << train;
  if (!val.empty()) e << YAML::Key << "val" << YAML::Value << YAML::Flow << val;
  e << YAML::Key << "options" << YAML::Value << YAML::BeginMap;
  for (const auto& [k, v] : options) e << YAML::Key << k << YAML::Value << v;
  e << YAML::EndMap;
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

namespace {

// Shard and label index names are joined to the split's folder: a path would
// lead out of the dataset.
Status PlainFileName(const std::string& name, const std::string& where) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
    return Status::Corruption(where + ": '" + name + "' is not a plain file name");
  return Status::OK();
}

}  // namespace

Status Manifest::FromYaml(const std::string& text, const std::string& where, Manifest* out) {
  YAML::Node root;
  const Status parsed = ParseYaml(text, where, &root);
  if (!parsed.ok()) return Status::Corruption(parsed.message());
  try {
    if (!root.IsMap() || root["format"].as<std::string>("") != "ffyolo-dataset")
      return Status::Corruption(where + ": not an ffyolo dataset manifest (format: ffyolo-dataset missing)");
    Manifest m;
    m.version = root["version"].as<int>(0);
    if (m.version != kManifestVersion)
      return Status::NotSupported(where + ": manifest version " + std::to_string(m.version) +
                                  " (this build reads version " + std::to_string(kManifestVersion) + ")");
    m.created = root["created"].as<std::string>("");
    if (const YAML::Node src = root["source"]) {
      m.source = src["path"].as<std::string>("");
      m.source_layout = src["layout"].as<std::string>("");
    }
    m.names = root["names"].as<std::vector<std::string>>();
    m.category_ids = root["category_ids"].as<std::vector<int>>();
    if (m.names.size() != m.category_ids.size())
      return Status::Corruption(where + ": " + std::to_string(m.names.size()) + " names but " +
                                std::to_string(m.category_ids.size()) + " category ids");
    if (std::set<int>(m.category_ids.begin(), m.category_ids.end()).size() != m.category_ids.size())
      return Status::Corruption(where + ": category_ids repeat an id");
    if (const YAML::Node nc = root["nc"]; nc && nc.as<int64_t>() != static_cast<int64_t>(m.names.size()))
      return Status::Corruption(where + ": nc is " + nc.as<std::string>() + " but names lists " +
                                std::to_string(m.names.size()) + " classes");
    for (const auto& kv : root["splits"]) {
      SplitInfo s;
      s.name = kv.first.as<std::string>();
      const YAML::Node v = kv.second;
      const std::string split_where = where + ": split " + s.name;
      if (const Status named = CheckSplitName(s.name); !named.ok())
        return Status::Corruption(where + ": " + named.message());
      s.samples = v["samples"].as<int64_t>();
      s.boxes = v["boxes"].as<int64_t>(0);
      s.crowd_boxes = v["crowd_boxes"].as<int64_t>(0);
      s.background = v["background"].as<int64_t>(0);
      s.skipped = v["skipped"].as<int64_t>(0);
      s.exif_oriented = v["exif_oriented"].as<int64_t>(-1);
      s.exif_applied = v["exif_applied"].as<bool>(false);
      s.bytes = v["bytes"].as<uint64_t>(0);
      s.label_index = v["label_index"].as<std::string>(kLabelIndexFile);
      s.label_index_crc = v["label_index_crc"].as<uint32_t>(0);
      FFR_RETURN_IF_ERROR(PlainFileName(s.label_index, split_where + ": label_index"));
      for (const auto& sh : v["shards"]) {
        s.shards.push_back({sh["file"].as<std::string>(), sh["samples"].as<int64_t>(), sh["bytes"].as<uint64_t>(0),
                            sh["meta_crc"].as<uint32_t>(0)});
        FFR_RETURN_IF_ERROR(PlainFileName(s.shards.back().file, split_where + ": shard"));
      }
      int64_t in_shards = 0;
      for (const ShardInfo& shard : s.shards) in_shards += shard.samples;
      if (in_shards != s.samples)
        return Status::Corruption(split_where + ": its shards hold " + std::to_string(in_shards) +
                                  " samples, not the " + std::to_string(s.samples) +
                                  " it counts (the manifest was cut short or edited)");
      m.splits.push_back(std::move(s));
    }
    if (m.splits.empty()) return Status::Corruption(where + ": the manifest lists no splits");
    for (const auto& [key, names] : {std::pair{"train", &m.train}, std::pair{"val", &m.val}}) {
      if (const YAML::Node listed = root[key]) *names = listed.as<std::vector<std::string>>();
      for (const std::string& name : *names)
        if (m.FindSplit(name) == nullptr)
          return Status::Corruption(where + ": " + key + " names split '" + name + "', which the manifest lacks");
    }
    // Written last: without it, the file ends early (a split or more may be missing).
    const YAML::Node opts = root["options"];
    if (!opts || !opts.IsMap())
      return Status::Corruption(where + ": the manifest ends before its last entry (options): it was cut short");
    for (const auto& kv : opts) m.options[kv.first.as<std::string>()] = kv.second.as<std::string>();
    *out = std::move(m);
    return Status::OK();
  } catch (const YAML::Exception& e) {
    return Status::Corruption(where + ": " + e.what());
  }
}

std::string FormatRecordedSplits(const Manifest& m) {
  std::string text;
  for (const auto& [role, splits] : {std::pair{"train", &m.train}, std::pair{"val", &m.val}}) {
    if (splits->empty()) continue;
    text += (text.empty() ? "" : "; ") + std::string(role) + ":";
    for (size_t k = 0; k < splits->size(); ++k) text += (k ? ", " : " ") + (*splits)[k];
  }
  return text.empty() ? text : text + " (the data YAML's, recorded at pack time)\n";
}

}  // namespace ffyolo
