// Exceptions from LibTorch, yaml-cpp and the standard library turned into a
// Status at the trainer's edges, with the code that says what went wrong: a
// bad value stays InvalidArgument, a failed collective or device an IOError.
#pragma once

#include <exception>

#include "ffr/status.h"

namespace ffyolo {

ffr::Status StatusFromException(std::exception_ptr exception);

// Runs `body` (which returns a Status) and returns its Status or the exception's.
template <class Body>
ffr::Status StatusOrException(Body&& body) {
  try {
    return body();
  } catch (...) {
    return StatusFromException(std::current_exception());
  }
}

}  // namespace ffyolo
