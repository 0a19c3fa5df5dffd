// Status: the outcome of an operation, LevelDB style. A failed Status carries a
// code and a message that names the file, the sample and what is wrong.
#pragma once

#include <string>
#include <utility>

namespace ffr {

class Status {
 public:
  enum class Code {
    kOk = 0,
    kNotFound,
    kCorruption,
    kIOError,
    kInvalidArgument,
    kAlreadyExists,
    kNotSupported,
    kAborted,  // stopped on request (a signal), with state saved to resume from
  };

  Status() = default;

  static Status OK() { return Status(); }
  static Status NotFound(std::string msg) { return Status(Code::kNotFound, std::move(msg)); }
  static Status Corruption(std::string msg) { return Status(Code::kCorruption, std::move(msg)); }
  static Status IOError(std::string msg) { return Status(Code::kIOError, std::move(msg)); }
  static Status InvalidArgument(std::string msg) { return Status(Code::kInvalidArgument, std::move(msg)); }
  static Status AlreadyExists(std::string msg) { return Status(Code::kAlreadyExists, std::move(msg)); }
  static Status NotSupported(std::string msg) { return Status(Code::kNotSupported, std::move(msg)); }
  static Status Aborted(std::string msg) { return Status(Code::kAborted, std::move(msg)); }
  // An IOError whose message ends with strerror(err).
  static Status FromErrno(const std::string& context, int err);

  bool ok() const { return code_ == Code::kOk; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsIOError() const { return code_ == Code::kIOError; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsAlreadyExists() const { return code_ == Code::kAlreadyExists; }
  bool IsNotSupported() const { return code_ == Code::kNotSupported; }
  bool IsAborted() const { return code_ == Code::kAborted; }

  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "Corruption: <message>", or "OK".
  std::string ToString() const;

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace ffr

// Returns from the enclosing function when `expr` yields a failed Status.
#define FFR_RETURN_IF_ERROR(expr)           \
  do {                                      \
    ::ffr::Status _ffr_status = (expr);     \
    if (!_ffr_status.ok()) return _ffr_status; \
  } while (0)
