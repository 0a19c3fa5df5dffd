// The GIL released and taken back so that the interpreter's exit never ends a thread inside the extension.
//
// Once the interpreter is finalizing, Python ends any other thread that takes the GIL (pthread_exit), also
// one running Python code from the extension's C++ (numpy's array export, a memory hook), and the forced
// unwinding aborts the process when it meets one of the extension's frames: a noexcept function or
// destructor, nanobind's catch (...). So a thread passes a gate before it runs Python code in the extension
// or takes the GIL back there: the bound calls that release the GIL or run Python code enter through
// InCall, the GIL is released through ReleasedGil, and C++ calls Python through HeldGil. An atexit callback,
// which Python runs before it starts finalizing, shuts the gate and waits for the threads past it to leave;
// from then on a thread other than the exiting one that comes to the gate parks for good, without the GIL
// (the process is ending, and daemon threads are not waited for).
#ifndef FFYOLO_PYTHON_GIL_H_
#define FFYOLO_PYTHON_GIL_H_

#include <Python.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include <nanobind/nanobind.h>

namespace ffyolo::python {
namespace gil_gate {

struct State {
  std::mutex mu;
  std::condition_variable idle;
  bool shut = false;
  std::thread::id exiting_thread;  // the one running the atexit callbacks, which goes on to finalize
  int past = 0;                    // threads past the gate: running Python code in the extension, or taking the GIL
};

// Never destroyed: threads parked at the gate outlive the static destructors.
inline State& Get() {
  static State* state = new State;
  return *state;
}

struct ThisThread {
  int depth = 0;      // InCall and HeldGil scopes it is in
  bool past = false;  // counted in State::past
};
inline thread_local ThisThread current;

// The thread is about to run Python code or take the GIL: counted past the gate, or, once it is shut,
// parked.
inline void Pass(bool holds_gil) {
  State& g = Get();
  std::unique_lock<std::mutex> lock(g.mu);
  if (g.shut && std::this_thread::get_id() != g.exiting_thread) {
    if (current.past && --g.past == 0) g.idle.notify_all();
    lock.unlock();
    if (holds_gil) PyEval_SaveThread();
    for (;;) pause();
  }
  if (!current.past) ++g.past;
  current.past = true;
}

// The thread runs no Python code in the extension for now: without the GIL, or out of every scope.
inline void Stop() {
  if (!current.past) return;
  State& g = Get();
  std::lock_guard<std::mutex> lock(g.mu);
  current.past = false;
  if (--g.past == 0) g.idle.notify_all();
}

}  // namespace gil_gate

// A bound call that releases the GIL or runs Python code, as an nb::call_guard.
struct InCall {
  InCall() {
    ++gil_gate::current.depth;
    gil_gate::Pass(true);
  }
  ~InCall() {
    if (--gil_gate::current.depth == 0) gil_gate::Stop();
  }
  InCall(const InCall&) = delete;
  InCall& operator=(const InCall&) = delete;
};

// The GIL released for this scope (a read, the loader's wait), and taken back through the gate.
class ReleasedGil {
 public:
  ReleasedGil() : state_(PyEval_SaveThread()) { gil_gate::Stop(); }
  ~ReleasedGil() {
    gil_gate::Pass(false);
    PyEval_RestoreThread(state_);
    if (gil_gate::current.depth == 0) gil_gate::Stop();
  }
  ReleasedGil(const ReleasedGil&) = delete;
  ReleasedGil& operator=(const ReleasedGil&) = delete;

 private:
  PyThreadState* state_;
};

// The GIL held for this scope, in which C++ calls Python (a memory hook), whether the thread held it or not.
class HeldGil {
 public:
  HeldGil() {
    ++gil_gate::current.depth;
    gil_gate::Pass(PyGILState_Check());
    state_ = PyGILState_Ensure();
  }
  ~HeldGil() {
    PyGILState_Release(state_);
    if (--gil_gate::current.depth == 0 || !PyGILState_Check()) gil_gate::Stop();
  }
  HeldGil(const HeldGil&) = delete;
  HeldGil& operator=(const HeldGil&) = delete;

 private:
  PyGILState_STATE state_;
};

// Opens the gate, and has atexit shut it and then call `then`, when no other thread runs Python code in the
// extension, nor ever will.
inline void ShutGilGateAtExit(void (*then)()) {
  gil_gate::Get().shut = false;
  nanobind::module_::import_("atexit").attr("register")(nanobind::cpp_function([then] {
    gil_gate::State& g = gil_gate::Get();
    {
      std::lock_guard<std::mutex> lock(g.mu);
      g.shut = true;
      g.exiting_thread = std::this_thread::get_id();
    }
    PyThreadState* state = PyEval_SaveThread();  // the threads past the gate may need it to leave
    {
      std::unique_lock<std::mutex> lock(g.mu);
      g.idle.wait(lock, [&] { return g.past == 0; });
    }
    PyEval_RestoreThread(state);
    then();
  }));
}

}  // namespace ffyolo::python

#endif  // FFYOLO_PYTHON_GIL_H_
