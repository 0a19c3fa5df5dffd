#include "ffyolo/exception_status.h"

#include <c10/util/Exception.h>
#include <yaml-cpp/exceptions.h>

#include <new>
#include <stdexcept>

namespace ffyolo {

using ffr::Status;

Status StatusFromException(std::exception_ptr exception) {
  try {
    std::rethrow_exception(exception);
  } catch (const c10::ValueError& e) {  // TORCH_CHECK_VALUE: a bad argument (e.g. a negative learning rate)
    return Status::InvalidArgument(e.what_without_backtrace());
  } catch (const c10::IndexError& e) {
    return Status::InvalidArgument(e.what_without_backtrace());
  } catch (const c10::TypeError& e) {
    return Status::InvalidArgument(e.what_without_backtrace());
  } catch (const c10::NotImplementedError& e) {
    return Status::NotSupported(e.what_without_backtrace());
  } catch (const c10::Error& e) {  // TORCH_CHECK, CUDA errors, a failed or timed-out collective
    return Status::IOError(e.what_without_backtrace());
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(e.what());
  } catch (const std::invalid_argument& e) {
    return Status::InvalidArgument(e.what());
  } catch (const std::out_of_range& e) {
    return Status::InvalidArgument(e.what());
  } catch (const std::domain_error& e) {
    return Status::InvalidArgument(e.what());
  } catch (const std::bad_alloc&) {
    return Status::IOError("out of memory");
  } catch (const std::exception& e) {  // std::filesystem and other system errors included
    return Status::IOError(e.what());
  } catch (...) {
    return Status::IOError("unknown exception");
  }
}

}  // namespace ffyolo
