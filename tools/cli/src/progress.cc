#include "ffyolo/progress.h"

#include <unistd.h>

#include <chrono>
#include <cmath>

namespace ffyolo {
namespace {

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string FormatRate(double rate) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), rate >= 100 ? "%.0f" : rate >= 10 ? "%.1f" : "%.2f", rate);
  return buf;
}

}  // namespace

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = std::lround(seconds);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof(buf), "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  else
    std::snprintf(buf, sizeof(buf), "%02ld:%02ld", s / 60, s % 60);
  return buf;
}

ProgressBar::ProgressBar(Options options) : options_(std::move(options)) {
  if (!options_.clock) options_.clock = SteadySeconds;
  tty_ = options_.tty >= 0 ? options_.tty != 0 : isatty(fileno(options_.out)) != 0;
  start_ = options_.clock();
  // A terminal shows the bar at once; a log gets its first line after one interval.
  if (!tty_) last_draw_ = start_;
}

ProgressBar::~ProgressBar() {
  if (!finished_) Finish(postfix_);
}

std::string ProgressBar::Render(int64_t done, double elapsed, const std::string& postfix) const {
  const double rate = elapsed > 0 ? done / elapsed : 0;
  std::string line = options_.label.empty() ? "" : options_.label + ": ";
  const int64_t total = options_.total;
  if (total > 0) {
    const double frac = std::min(1.0, static_cast<double>(done) / total);
    char pct[8];
    std::snprintf(pct, sizeof(pct), "%3d%%", static_cast<int>(frac * 100));
    line += pct;
    if (tty_) {
      constexpr int kWidth = 20;
      const int filled = static_cast<int>(frac * kWidth);
      line += "|" + std::string(filled, '#') + std::string(kWidth - filled, ' ') + "|";
    }
    line += " " + std::to_string(done) + "/" + std::to_string(total);
    const double eta = rate > 0 ? (total - done) / rate : NAN;
    line += " [" + FormatDuration(elapsed) + "<" + FormatDuration(eta) + ", " + FormatRate(rate) + " " +
            options_.unit + "/s]";
  } else {
    line += std::to_string(done) + " [" + FormatDuration(elapsed) + ", " + FormatRate(rate) + " " + options_.unit +
            "/s]";
  }
  if (!postfix.empty()) line += " " + postfix;
  return line;
}

void ProgressBar::Draw(int64_t done, const std::string& postfix) {
  const std::string line = Render(done, options_.clock() - start_, postfix);
  std::fflush(stdout);  // keep the bar after anything printed before it
  if (tty_)
    std::fprintf(options_.out, "\r%s\033[K", line.c_str());
  else
    std::fprintf(options_.out, "%s\n", line.c_str());
  std::fflush(options_.out);
}

void ProgressBar::Update(int64_t done, const std::string& postfix) {
  done_ = done;
  postfix_ = postfix;
  const double now = options_.clock();
  if (now - last_draw_ < (tty_ ? options_.tty_interval : options_.plain_interval)) return;
  last_draw_ = now;
  Draw(done, postfix);
}

void ProgressBar::Finish(const std::string& postfix) {
  if (finished_) return;
  finished_ = true;
  Draw(done_, postfix.empty() ? postfix_ : postfix);
  if (tty_) std::fputc('\n', options_.out);
  std::fflush(options_.out);
}

}  // namespace ffyolo
