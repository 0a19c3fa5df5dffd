// A stand-in worker for launcher_test: records what the launcher gave it and
// then behaves as its arguments say.
//   --out DIR            write DIR/env.<LOCAL_RANK> (NUL-separated KEY=VALUE),
//                        DIR/cpus.<LOCAL_RANK> (its affinity) and DIR/pid.<LOCAL_RANK>;
//                        then, with signal handlers in place, DIR/ready.<LOCAL_RANK>,
//                        and wait until all LOCAL_WORLD_SIZE workers are ready
//   --exit RANK:CODE     the worker with that RANK then exits with CODE
//   --sleep SECONDS      the others sleep that long, then exit 0
//   --on-signal MODE     for SIGINT/TERM/HUP/QUIT/USR1/USR2, write the signal number to
//                        DIR/signal.<LOCAL_RANK>; MODE "ignore": keep sleeping,
//                        "checkpoint": exit 75 (as a worker that saved a checkpoint)
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <thread>

extern char** environ;

namespace {

volatile sig_atomic_t g_signal = 0;

void OnSignal(int signo) { g_signal = signo; }

void WriteFile(const std::string& path, const std::string& data) {
  const std::string tmp = path + ".tmp";
  std::ofstream(tmp, std::ios::binary) << data;
  std::rename(tmp.c_str(), path.c_str());
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

std::string Env(const char* name) {
  const char* v = getenv(name);
  return v ? v : "";
}

}  // namespace

int main(int argc, char** argv) {
  std::string out, exit_spec, on_signal;
  double sleep_seconds = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--out") out = argv[i + 1];
    else if (flag == "--exit") exit_spec = argv[i + 1];
    else if (flag == "--sleep") sleep_seconds = std::atof(argv[i + 1]);
    else if (flag == "--on-signal") on_signal = argv[i + 1];
    else return 64;
  }
  const std::string local_rank = Env("LOCAL_RANK");
  if (!on_signal.empty()) {
    for (int signo : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) signal(signo, OnSignal);
  }
  if (!out.empty()) {
    std::string env;
    for (char** e = environ; *e; ++e) env += std::string(*e) + '\0';
    WriteFile(out + "/env." + local_rank, env);
    cpu_set_t set;
    std::string cpus;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) cpus += (cpus.empty() ? "" : ",") + std::to_string(c);
    WriteFile(out + "/cpus." + local_rank, cpus);
    WriteFile(out + "/pid." + local_rank, std::to_string(getpid()));
    WriteFile(out + "/ready." + local_rank, "");
    const int n = std::atoi(Env("LOCAL_WORLD_SIZE").c_str());
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (int r = 0; r < n; ++r)
      while (!Exists(out + "/ready." + std::to_string(r))) {
        if (std::chrono::steady_clock::now() > give_up) return 99;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
  }
  const size_t colon = exit_spec.find(':');
  if (colon != std::string::npos && exit_spec.substr(0, colon) == Env("RANK"))
    return std::atoi(exit_spec.c_str() + colon + 1);

  const auto wake = std::chrono::steady_clock::now() + std::chrono::duration<double>(sleep_seconds);
  while (std::chrono::steady_clock::now() < wake) {
    // Signals interrupt the sleep; the handler only records them.
    const struct timespec tick = {0, 20 * 1000 * 1000};
    nanosleep(&tick, nullptr);
    if (g_signal != 0) {
      WriteFile(out + "/signal." + local_rank, std::to_string(g_signal));
      g_signal = 0;
      if (on_signal == "checkpoint") return 75;
    }
  }
  return 0;
}
