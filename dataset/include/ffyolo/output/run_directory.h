// A run directory (yolo-train's, yolo-val's, yolo-detect's project/name) held
// by the run writing into it. Each run checks its outputs against its inputs
// first and holds the directory after: a refused run leaves nothing behind
// (no folder, no .lock) in a place the user named.
#pragma once

#include <memory>
#include <string>

#include "ffr/env.h"
#include "ffr/status.h"

namespace ffyolo {

// Creates the run directory `dir` and holds it (a lock on dir/.lock) until *lock is destroyed: a
// second run into the same directory (--exist-ok, a --resume of a run still going, two runs that
// picked the same expN at once) is refused while the first holds it, instead of both writing there.
ffr::Status HoldRunDirectory(ffr::Env* env, const std::string& dir, std::unique_ptr<ffr::FileLock>* lock);

}  // namespace ffyolo
