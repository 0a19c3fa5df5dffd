// Every YAML ffyolo reads (data YAMLs, hyps, model configs, manifests, run options, cache files)
// is parsed here, so that all of them read the same way.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "ffr/status.h"

namespace ffyolo {

// Parses `text` (read from `where`, which messages name) into *root. Invalid YAML is
// InvalidArgument. So is a mapping, at any depth, that gives a key twice: yaml-cpp keeps both and a
// lookup finds the first, where PyYAML (Ultralytics' reader) keeps the last, so a file with
// `names:` twice would mean different things to the two; the message names the key and both lines.
ffr::Status ParseYaml(const std::string& text, const std::string& where, YAML::Node* root);

// "where:line" of a node, for messages, so that an editor jumps to it.
std::string YamlLocation(const std::string& where, const YAML::Node& node);

}  // namespace ffyolo
