#include "signal_pipe.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace ffyolo {

namespace {

// The installed SignalPipe's write end; -1 when none is installed.
std::atomic<int> g_write_fd{-1};

void WriteSignalNumber(int signo) {
  const int saved_errno = errno;
  const int fd = g_write_fd.load();
  const unsigned char byte = static_cast<unsigned char>(signo);
  if (fd >= 0) {
    // A full pipe drops the byte, but then a wake-up is already pending.
    [[maybe_unused]] const ssize_t written = ::write(fd, &byte, 1);
  }
  errno = saved_errno;
}

}  // namespace

ffr::Status SignalPipe::Install(const std::vector<int>& signals) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return ffr::Status::FromErrno("launcher: signal pipe", errno);
  read_fd_ = fds[0];
  write_fd_ = fds[1];
  int expected = -1;
  if (!g_write_fd.compare_exchange_strong(expected, write_fd_))
    return ffr::Status::InvalidArgument(
        "launcher: a SignalPipe is already installed in this process (one LaunchWorkers at a time)");
  for (int signo : signals) {
    struct sigaction action {};
    action.sa_handler = WriteSignalNumber;
    sigemptyset(&action.sa_mask);
    // SA_RESTART spares the process's other threads EINTR; the loop polls anyway.
    action.sa_flags = SA_RESTART | (signo == SIGCHLD ? SA_NOCLDSTOP : 0);
    struct sigaction old {};
    if (::sigaction(signo, &action, &old) != 0) return ffr::Status::FromErrno("launcher: sigaction", errno);
    previous_.emplace_back(signo, old);
  }
  return ffr::Status::OK();
}

std::vector<int> SignalPipe::Drain() {
  std::vector<int> signals;
  unsigned char buffer[64];
  ssize_t n;
  while ((n = ::read(read_fd_, buffer, sizeof(buffer))) > 0) signals.insert(signals.end(), buffer, buffer + n);
  return signals;
}

SignalPipe::~SignalPipe() {
  for (auto it = previous_.rbegin(); it != previous_.rend(); ++it) ::sigaction(it->first, &it->second, nullptr);
  int mine = write_fd_;
  g_write_fd.compare_exchange_strong(mine, -1);
  if (read_fd_ >= 0) ::close(read_fd_);
  if (write_fd_ >= 0) ::close(write_fd_);
}

}  // namespace ffyolo
