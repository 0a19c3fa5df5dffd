#include "ffr/status.h"

#include <cstring>

namespace ffr {

Status Status::FromErrno(const std::string& context, int err) {
  return IOError(context + ": " + std::strerror(err));
}

std::string Status::ToString() const {
  const char* name = "OK";
  switch (code_) {
    case Code::kOk: return "OK";
    case Code::kNotFound: name = "Not found"; break;
    case Code::kCorruption: name = "Corruption"; break;
    case Code::kIOError: name = "IO error"; break;
    case Code::kInvalidArgument: name = "Invalid argument"; break;
    case Code::kAlreadyExists: name = "Already exists"; break;
    case Code::kNotSupported: name = "Not supported"; break;
    case Code::kAborted: name = "Aborted"; break;
  }
  return std::string(name) + ": " + message_;
}

}  // namespace ffr
