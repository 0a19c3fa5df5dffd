#include "ffyolo/yaml_parse.h"

#include <map>
#include <set>
#include <utility>

namespace ffyolo {
namespace {

using Position = std::pair<int, int>;  // line, column

std::string KeyText(const YAML::Node& key) { return key.IsScalar() ? key.Scalar() : YAML::Dump(key); }

// An alias is the node it names, at the anchor's position: each node of the text is checked once,
// however often aliases repeat it, so the work stays linear in the text.
ffr::Status CheckKeys(const YAML::Node& node, const std::string& where, std::set<Position>* checked) {
  if (!node.IsMap() && !node.IsSequence()) return ffr::Status::OK();
  if (!checked->insert({node.Mark().line, node.Mark().column}).second) return ffr::Status::OK();
  if (node.IsSequence()) {
    for (const YAML::Node& item : node) FFR_RETURN_IF_ERROR(CheckKeys(item, where, checked));
    return ffr::Status::OK();
  }
  std::map<std::string, YAML::Node> keys;
  for (const auto& kv : node) {
    const auto [first, inserted] = keys.emplace(KeyText(kv.first), kv.first);
    if (!inserted)
      return ffr::Status::InvalidArgument(YamlLocation(where, kv.first) + ": key '" + first->first +
                                          "' appears twice (first on line " +
                                          std::to_string(first->second.Mark().line + 1) + ")");
    FFR_RETURN_IF_ERROR(CheckKeys(kv.second, where, checked));
  }
  return ffr::Status::OK();
}

}  // namespace

ffr::Status ParseYaml(const std::string& text, const std::string& where, YAML::Node* root) {
  try {
    *root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return ffr::Status::InvalidArgument(where + ": not valid YAML: " + e.what());
  }
  std::set<Position> checked;
  return CheckKeys(*root, where, &checked);
}

std::string YamlLocation(const std::string& where, const YAML::Node& node) {
  return where + ":" + std::to_string(node.Mark().line + 1);
}

}  // namespace ffyolo
