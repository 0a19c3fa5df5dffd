// Turns asynchronous signals into bytes on a pipe, so the launcher's
// supervision loop can wait for "a worker exited or a signal came" with one
// poll() and handle both outside signal context.
#pragma once

#include <signal.h>

#include <vector>

#include "ffr/status.h"

namespace ffyolo {

// While installed, each of the given signals writes its number to a pipe
// instead of taking its previous action. One instance per process at a time
// (the handler reaches it through a global).
class SignalPipe {
 public:
  SignalPipe() = default;
  // Puts the previous dispositions back and closes the pipe.
  ~SignalPipe();
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;

  // Creates the pipe (close-on-exec) and installs the handlers.
  ffr::Status Install(const std::vector<int>& signals);

  // The end to poll() for POLLIN.
  int read_fd() const { return read_fd_; }

  // The signals that arrived since the last call, oldest first.
  std::vector<int> Drain();

 private:
  int read_fd_ = -1;
  int write_fd_ = -1;
  std::vector<std::pair<int, struct sigaction>> previous_;
};

}  // namespace ffyolo
