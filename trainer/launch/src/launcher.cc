#include "ffyolo/launcher.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "cpu_list.h"
#include "signal_pipe.h"

namespace ffyolo {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
constexpr int kLaunchFailed = 1;
constexpr int kExecFailed = 127;
// A wake-up now and then even without SIGCHLD, in case another part of the
// process reaped a worker (waitpid(-1)) and the pipe never hears of it.
constexpr std::chrono::milliseconds kPollInterval{1000};

// Everything one child needs between fork and exec, built before forking:
// that window allows only async-signal-safe calls (no allocation).
struct ChildPlan {
  std::vector<std::string> env;
  std::vector<char*> envp;
  NumaBinding binding;
  std::string binding_failed;  // stderr messages, completed by an errno
  std::string exec_failed;
};

std::string SignalName(int signo) {
  const char* abbrev = sigabbrev_np(signo);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signo);
}

// Writes `message`, `err` and a newline to stderr. Async-signal-safe.
void WriteErrno(const std::string& message, int err) {
  char digits[16];
  int pos = sizeof(digits);
  digits[--pos] = '\n';
  do {
    digits[--pos] = static_cast<char>('0' + err % 10);
    err /= 10;
  } while (err > 0 && pos > 0);
  [[maybe_unused]] ssize_t written = ::write(STDERR_FILENO, message.data(), message.size());
  written = ::write(STDERR_FILENO, digits + pos, sizeof(digits) - pos);
}

ChildPlan PlanChild(const LaunchOptions& options, const EnvMap& parent_env, int local_rank) {
  EnvMap env = parent_env;
  for (auto& [name, value] : WorkerVariables(options.job, local_rank)) env[name] = value;
  ChildPlan plan;
  for (const auto& [name, value] : env) plan.env.push_back(name + "=" + value);
  for (std::string& entry : plan.env) plan.envp.push_back(entry.data());
  plan.envp.push_back(nullptr);
  if (!options.bindings.empty()) plan.binding = options.bindings[local_rank];
  const std::string worker = "ffyolo launcher: worker " + std::to_string(local_rank) + ": ";
  plan.binding_failed = worker + "NUMA binding (node " + std::to_string(plan.binding.node) + ", cpus " +
                        FormatCpuList(plan.binding.cpus) + ") not fully applied, errno ";
  plan.exec_failed = worker + "cannot execute " + options.executable + ", errno ";
  return plan;
}

// The child between fork and exec: async-signal-safe calls only.
[[noreturn]] void RunChild(const char* executable, char* const* argv, const ChildPlan& plan,
                           const std::vector<int>& handled_signals, pid_t launcher, pid_t group,
                           const sigset_t& original_mask) {
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  for (int signo : handled_signals) ::sigaction(signo, &default_action, nullptr);
  ::setpgid(0, group);  // group 0: worker 0 founds the group
  if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != launcher) ::_exit(kLaunchFailed);
  if (const int err = ApplyNumaBinding(plan.binding); err != 0) WriteErrno(plan.binding_failed, err);
  ::sigprocmask(SIG_SETMASK, &original_mask, nullptr);
  ::execve(executable, argv, plan.envp.data());
  WriteErrno(plan.exec_failed, errno);
  ::_exit(kExecFailed);
}

// The running workers of one launch: reaps them, signals their process group
// and keeps the result (the first non-zero status).
class WorkerGroup {
 public:
  WorkerGroup(const LaunchOptions& options, std::function<void(const std::string&)> log)
      : options_(options), log_(std::move(log)), pids_(options.job.local_world_size, -1) {}

  pid_t group() const { return group_; }  // 0 until the first worker runs
  int started() const { return started_; }
  int first_rank() const { return options_.job.node_rank * options_.job.local_world_size; }

  void Add(int local_rank, pid_t pid) {
    if (group_ == 0) group_ = pid;
    // The child does the same; whichever runs first wins the race with exec.
    ::setpgid(pid, group_);
    pids_[local_rank] = pid;
    ++running_;
    ++started_;
  }

  // Signals every worker and starts the grace clock (if not running yet).
  void Stop(int signo) {
    Signal(signo);
    if (!stopping_) {
      stopping_ = true;
      deadline_ = Clock::now() + options_.grace;
    }
  }

  void Fail(int status) {
    if (result_ == 0) result_ = status;
  }

  // Waits until every worker has exited, stopping them all on the first
  // failure or a signal to the launcher.
  int Supervise(SignalPipe* signals) {
    for (;;) {
      Reap();
      if (running_ == 0) return result_;
      auto wait = kPollInterval;
      if (stopping_ && !killed_) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - Clock::now());
        if (left.count() <= 0) {
          log_(std::to_string(running_) + " worker(s) still running " + std::to_string(options_.grace.count()) +
               " ms after being stopped: sending SIGKILL");
          Signal(SIGKILL);
          killed_ = true;
        } else {
          wait = std::min(wait, left);
        }
      }
      pollfd pfd{signals->read_fd(), POLLIN, 0};
      ::poll(&pfd, 1, static_cast<int>(wait.count()));
      for (int signo : signals->Drain()) {
        if (signo == SIGCHLD) continue;
        log_("received " + SignalName(signo) + ": forwarding it to the workers");
        Stop(signo);
      }
    }
  }

 private:
  void Signal(int signo) {
    // Only while a worker is unreaped: until then the group id cannot be reused.
    if (running_ > 0) ::killpg(group_, signo);
  }

  void Reap() {
    for (size_t i = 0; i < pids_.size(); ++i) {
      if (pids_[i] <= 0) continue;
      int wstatus = 0;
      const pid_t r = ::waitpid(pids_[i], &wstatus, WNOHANG);
      const int wait_errno = errno;
      if (r == 0 || (r < 0 && wait_errno == EINTR)) continue;
      const std::string who = "worker " + std::to_string(i) + " (rank " +
                              std::to_string(first_rank() + static_cast<int>(i)) + ", pid " +
                              std::to_string(pids_[i]) + ")";
      int status = 0;
      if (r < 0) {
        log_(who + " was reaped by someone else: " + std::strerror(wait_errno));
        status = kLaunchFailed;
      } else if (WIFSIGNALED(wstatus)) {
        status = 128 + WTERMSIG(wstatus);
        log_(who + " was killed by " + SignalName(WTERMSIG(wstatus)));
      } else {
        status = WEXITSTATUS(wstatus);
        if (status != 0) log_(who + " exited with " + std::to_string(status));
      }
      pids_[i] = -1;
      --running_;
      if (status != 0 && result_ == 0) {
        Fail(status);
        if (!stopping_) {
          log_("stopping the other workers (SIGTERM, SIGKILL after " + std::to_string(options_.grace.count()) +
               " ms)");
          Stop(SIGTERM);
        }
      }
    }
  }

  const LaunchOptions& options_;
  const std::function<void(const std::string&)> log_;
  std::vector<pid_t> pids_;  // per local rank; -1 once reaped
  int running_ = 0;
  int started_ = 0;
  pid_t group_ = 0;
  bool stopping_ = false;
  bool killed_ = false;
  Clock::time_point deadline_;
  int result_ = 0;
};

}  // namespace

int LaunchWorkers(const LaunchOptions& options) {
  const auto log = options.log ? options.log : [](const std::string&) {};
  const int n = options.job.local_world_size;
  if (n < 1 || (!options.bindings.empty() && static_cast<int>(options.bindings.size()) != n)) {
    log("cannot start " + std::to_string(n) + " workers with " + std::to_string(options.bindings.size()) +
        " NUMA bindings");
    return kLaunchFailed;
  }

  std::vector<std::string> args = options.args;
  if (args.empty()) args.push_back(options.executable);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const EnvMap parent_env = CurrentEnvironment();
  std::vector<ChildPlan> children;
  for (int i = 0; i < n; ++i) children.push_back(PlanChild(options, parent_env, i));

  // Signals the launcher was told to ignore (nohup's SIGHUP) stay ignored, for
  // the workers too. SIGCHLD is always needed to notice exits.
  std::vector<int> handled = {SIGCHLD};
  for (int signo : kForwardedSignals) {
    struct sigaction current {};
    if (::sigaction(signo, nullptr, &current) == 0 && current.sa_handler != SIG_IGN) handled.push_back(signo);
  }
  SignalPipe signals;
  if (const ffr::Status s = signals.Install(handled); !s.ok()) {
    log(s.ToString());
    return kLaunchFailed;
  }

  WorkerGroup workers(options, log);
  const pid_t launcher = ::getpid();
  sigset_t all, original;
  sigfillset(&all);
  for (int i = 0; i < n; ++i) {
    // Blocked signals keep the child from running the launcher's handlers
    // before it resets them.
    ::pthread_sigmask(SIG_BLOCK, &all, &original);
    const pid_t pid = ::fork();
    if (pid == 0) RunChild(options.executable.c_str(), argv.data(), children[i], handled, launcher, workers.group(),
                            original);
    const int fork_errno = errno;
    ::pthread_sigmask(SIG_SETMASK, &original, nullptr);
    if (pid < 0) {
      log("cannot start worker " + std::to_string(i) + ": " + std::strerror(fork_errno));
      workers.Fail(kLaunchFailed);
      workers.Stop(SIGTERM);
      break;
    }
    workers.Add(i, pid);
  }
  if (workers.started() == n)
    log("started " + std::to_string(n) + " workers, ranks " + std::to_string(workers.first_rank()) + "-" +
        std::to_string(workers.first_rank() + n - 1) + " of " + std::to_string(options.job.world_size) +
        ", rendezvous " + options.job.master_addr + ":" + std::to_string(options.job.master_port) +
        ", process group " + std::to_string(workers.group()));
  return workers.Supervise(&signals);
}

}  // namespace ffyolo
