#include "ffyolo/output/run_directory.h"

namespace ffyolo {

ffr::Status HoldRunDirectory(ffr::Env* env, const std::string& dir, std::unique_ptr<ffr::FileLock>* lock) {
  FFR_RETURN_IF_ERROR(env->CreateDirs(dir));
  FFR_RETURN_IF_ERROR(env->TryLockFile(dir + "/.lock", lock));
  if (*lock) return ffr::Status::OK();
  return ffr::Status::AlreadyExists(dir + ": another run is writing into this directory; wait for it to end, or "
                                          "choose another --project/--name");
}

}  // namespace ffyolo
