// ProgressBar: progress of long work on stderr. On a terminal it redraws one
// line (at most ten times a second); otherwise (CI, logs) it prints a plain
// line every few seconds. The clock is injectable for tests.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace ffyolo {

class ProgressBar {
 public:
  struct Options {
    std::string label;
    int64_t total = 0;         // 0: unknown
    std::string unit = "it";  // per-second rate unit
    std::FILE* out = stderr;
    int tty = -1;                      // -1: ask isatty(out)
    double tty_interval = 0.1;         // seconds between redraws on a terminal
    double plain_interval = 5.0;       // seconds between plain lines
    std::function<double()> clock;     // seconds; default steady_clock
  };

  explicit ProgressBar(Options options);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Records progress; draws when a redraw is due. `postfix` follows the bar (losses, MB/s...).
  void Update(int64_t done, const std::string& postfix = "");
  // Draws the final state (with the last postfix unless a new one is given)
  // and ends the line. Called by the destructor if needed.
  void Finish(const std::string& postfix = "");

  // The text of one line (no "\r", no newline), for tests and for callers that log.
  std::string Render(int64_t done, double elapsed, const std::string& postfix) const;

 private:
  void Draw(int64_t done, const std::string& postfix);

  Options options_;
  bool tty_;
  double start_;
  double last_draw_ = -1e300;
  int64_t done_ = 0;
  std::string postfix_;
  bool finished_ = false;
};

// "1:02:03" or "02:03".
std::string FormatDuration(double seconds);

}  // namespace ffyolo
