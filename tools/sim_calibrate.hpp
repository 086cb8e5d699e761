// `ringlab sim --calibrate`: measures this machine over the tcp backend,
// fits the cost model's alpha, beta and gamma to it (simulator/model_file.hpp
// says how), saves them, and sets every all_reduce algorithm's prediction
// beside its measured time at 2 and 4 ranks (docs/cost-model.md).
#pragma once

#include <string>

namespace ringlab::cli {

struct CalibrateOptions {
  std::string save = "cost-model.json";
};

void run_calibration(const CalibrateOptions& options);

}  // namespace ringlab::cli
