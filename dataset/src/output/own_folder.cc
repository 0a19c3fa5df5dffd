#include "ffyolo/output/own_folder.h"

#include <algorithm>

namespace ffyolo {

ffr::Status ForeignFolder(const std::string& dir, const std::vector<std::string>& entries, const std::string& what) {
  std::string listed;
  for (size_t i = 0; i < entries.size() && i < 5; ++i) listed += (i ? ", " : "") + entries[i];
  if (entries.size() > 5) listed += ", ... (" + std::to_string(entries.size()) + " entries)";
  return ffr::Status::AlreadyExists(dir + ": holds files that are not " + what + " (" + listed +
                                    "); choose a new or empty output directory");
}

ffr::Status CheckOwnFolder(ffr::Env* env, const std::string& dir, const std::function<bool(const std::string&)>& is_own,
                           const std::string& what, std::vector<std::string>* entries) {
  entries->clear();
  if (!env->FileExists(dir)) return ffr::Status::OK();
  if (!env->IsDirectory(dir)) return ffr::Status::AlreadyExists(dir + ": exists and is not a directory");
  FFR_RETURN_IF_ERROR(env->GetChildren(dir, entries));
  if (entries->empty() || std::any_of(entries->begin(), entries->end(), is_own)) return ffr::Status::OK();
  return ForeignFolder(dir, *entries, what);
}

}  // namespace ffyolo
