// Every ffyolo executable (tools and tests) runs libgomp with a short spin, GOMP_SPINCOUNT=1000,
// unless the user's environment sets OMP_WAIT_POLICY or GOMP_SPINCOUNT.
//
// LibTorch's CPU threads, and OpenBLAS's under OpenCV, are libgomp's. By default a libgomp thread
// spins 300,000 times (about 3 ms) after each parallel region before it sleeps, and LibTorch runs
// thousands of short regions a step: on a machine doing other work the spinning threads take
// the cores that work needs. On 2 vCPUs with two other busy processes, yolo-detect took 3x as
// long and yolo-train 1.7x; a spin of 1,000 (some microseconds) kept them within 15% of the best
// loaded time and within 3% of libgomp's default when idle, where the passive policy (no spin)
// lost up to 60% (docs/build.md has the table).
//
// libgomp reads the variable once, in its initializer, before main(); the C library's own
// initializer, which runs after the executable's .preinit_array, resets the environment to the
// one the process started with. So a process started without it starts itself again at once with
// it added, from .preinit_array, before any library's initializer has run: the cost is the dynamic
// linking, about 0.15 s for a LibTorch executable (tests/CMakeLists.txt sets the variable for
// the tests, which then skip it). The process keeps its PID, arguments and the rest of its
// environment, and its children inherit the variable. Under valgrind, whose LD_PRELOAD would not
// follow the new image, nothing is done.
//
// Only an executable can carry a .preinit_array, so this is an object linked into each of them
// (cmake/FfyoloExecutables.cmake), never part of a library a user's program links.
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace {

constexpr char kShortSpin[] = "GOMP_SPINCOUNT=1000";

bool StartsWith(const char* s, const char* prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

// envp, not getenv: the C library's environment is not set up yet.
void RestartWithShortSpinUnlessChosen(int, char** argv, char** envp) {
  size_t n = 0;
  for (; envp[n] != nullptr; ++n) {
    if (StartsWith(envp[n], "OMP_WAIT_POLICY=") || StartsWith(envp[n], "GOMP_SPINCOUNT=")) return;
    if (StartsWith(envp[n], "LD_PRELOAD=") && std::strstr(envp[n], "vgpreload") != nullptr) return;
  }
  char** env = static_cast<char**>(std::malloc((n + 2) * sizeof(char*)));
  if (env == nullptr) return;
  std::memcpy(env, envp, n * sizeof(char*));
  env[n] = const_cast<char*>(kShortSpin);
  env[n + 1] = nullptr;
  execve("/proc/self/exe", argv, env);
  std::free(env);  // no /proc: go on with libgomp's default
}

__attribute__((section(".preinit_array"), used)) void (*const kRestart)(int, char**, char**) =
    &RestartWithShortSpinUnlessChosen;

}  // namespace
