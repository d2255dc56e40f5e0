#include "sim/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_format.h"

namespace phalanx::sim {

ProgressBar::ProgressBar(std::string label, int tasks, bool enabled)
    : label_(std::move(label)), enabled_(enabled), fractions_(std::max(tasks, 1), 0.0) {}

bool ProgressBar::StderrIsTerminal() { return isatty(STDERR_FILENO) != 0; }

std::string ProgressBar::Render(const std::string& label, double fraction, int width) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  const int filled = static_cast<int>(fraction * width + 0.5);
  return absl::StrFormat("[%s%s] %3d%% %s", std::string(filled, '#'),
                         std::string(width - filled, '.'), static_cast<int>(fraction * 100), label);
}

std::function<void(double)> ProgressBar::Reporter(int task) {
  if (!enabled_) return nullptr;
  return [this, task](double fraction) { Update(task, fraction); };
}

void ProgressBar::Update(int task, double fraction) {
  std::lock_guard<std::mutex> lock(mu_);
  fractions_[task] = fraction;
  double total = 0;
  for (double f : fractions_) total += f;
  total /= fractions_.size();
  const int percent = static_cast<int>(total * 100);
  if (percent == last_percent_) return;
  last_percent_ = percent;
  std::fprintf(stderr, "\r%s", Render(label_, total).c_str());
  std::fflush(stderr);
}

void ProgressBar::Finish() {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  std::fprintf(stderr, "\r%s\n", Render(label_, 1.0).c_str());
}

}  // namespace phalanx::sim
