// A progress bar on stderr for long simulations; silent when stderr is not a terminal, so logs
// and CI output stay clean.
//
//   ProgressBar bar("simulating", /*tasks=*/5);
//   engine_options.progress = bar.Reporter(/*task=*/0);   // called from any thread
//   ...
//   bar.Finish();
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace phalanx::sim {

class ProgressBar {
 public:
  ProgressBar(std::string label, int tasks, bool enabled);
  static bool StderrIsTerminal();

  // A callback that records task `task`'s fraction done (0..1) and redraws if it changed.
  std::function<void(double)> Reporter(int task);
  void Finish();
  // The bar as drawn for `fraction` (for tests): "[#####.....]  50% label".
  static std::string Render(const std::string& label, double fraction, int width = 30);

 private:
  void Update(int task, double fraction);

  std::string label_;
  bool enabled_;
  std::mutex mu_;
  std::vector<double> fractions_;
  int last_percent_ = -1;
};

}  // namespace phalanx::sim
