#include "sysfs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ffyolo {

bool ReadSysfsValue(const std::string& path, std::string* value) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  const size_t first = s.find_first_not_of(" \t\n");
  const size_t last = s.find_last_not_of(" \t\n");
  *value = first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
  return true;
}

bool ListSysfsDir(const std::string& path, std::vector<std::string>* names) {
  std::error_code ec;
  std::filesystem::directory_iterator it(path, ec);
  if (ec) return false;
  names->clear();
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) return false;
    names->push_back(it->path().filename().string());
  }
  std::sort(names->begin(), names->end());
  return true;
}

}  // namespace ffyolo
