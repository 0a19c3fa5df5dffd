#include "mapping_guard.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

namespace ffr::internal {
namespace {

// Fixed slots: the handler may only read memory that never moves. 4096 mapped
// shards at once is far beyond any dataset plus its pixel cache.
constexpr int kSlots = 4096;
struct Slot {
  std::atomic<uintptr_t> begin{0};  // 0: free
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> shrank{false};
};
Slot g_slots[kSlots];
std::mutex g_mu;  // slot allocation; never taken by the handler
struct sigaction g_previous;
uintptr_t g_page_size = 4096;

void OnSigbus(int sig, siginfo_t* info, void* context) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(info->si_addr);
  for (Slot& s : g_slots) {
    const uintptr_t begin = s.begin.load(std::memory_order_acquire);
    if (begin == 0 || a < begin || a >= s.end.load(std::memory_order_acquire)) continue;
    s.shrank.store(true, std::memory_order_release);
    void* page = reinterpret_cast<void*>(a & ~(g_page_size - 1));
    // mmap is a plain system call, safe here though POSIX does not list it.
    if (mmap(page, g_page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) return;
    break;
  }
  if (g_previous.sa_flags & SA_SIGINFO) {
    g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
  } else {
    // The faulting access runs again and the default action ends the process.
    signal(SIGBUS, SIG_DFL);
  }
}

void InstallHandler() {
  g_page_size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  struct sigaction sa = {};
  sa.sa_sigaction = OnSigbus;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGBUS, &sa, &g_previous);
}

}  // namespace

int GuardMapping(const void* addr, uint64_t size) {
  static std::once_flag installed;
  std::call_once(installed, InstallHandler);
  std::lock_guard<std::mutex> lock(g_mu);
  for (int i = 0; i < kSlots; ++i) {
    Slot& s = g_slots[i];
    if (s.begin.load(std::memory_order_relaxed) != 0) continue;
    s.shrank.store(false, std::memory_order_relaxed);
    s.end.store(reinterpret_cast<uintptr_t>(addr) + size, std::memory_order_relaxed);
    s.begin.store(reinterpret_cast<uintptr_t>(addr), std::memory_order_release);
    return i;
  }
  return -1;
}

void UnguardMapping(int guard) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_slots[guard].begin.store(0, std::memory_order_release);
}

bool MappingShrank(int guard) { return g_slots[guard].shrank.load(std::memory_order_acquire); }

}  // namespace ffr::internal
