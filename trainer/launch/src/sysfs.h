// Small reads of sysfs-like trees (real /sys or a test's fake one).
#pragma once

#include <string>
#include <vector>

namespace ffyolo {

// The file's contents without surrounding whitespace; false when unreadable.
bool ReadSysfsValue(const std::string& path, std::string* value);

// The names in a directory, sorted; false when it cannot be listed.
bool ListSysfsDir(const std::string& path, std::vector<std::string>* names);

}  // namespace ffyolo
