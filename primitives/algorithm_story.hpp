// Which algorithm a collective runs and why, in the one wording that
// `ringlab lesson` and the Python backend share, so that a learner who runs
// `ringlab lesson all_reduce` and then the same program under PyTorch on the
// "ringlab" backend reads one story:
//
//   all_reduce runs ring (the article's; ringlab's default, auto, picks by size)
//   all_reduce runs reduce_broadcast (ringlab's default, auto, picks it for 16 bytes on 4 ranks)
//   broadcast runs chain (RINGLAB_ALGORITHMS)
#pragma once

#include <cstddef>
#include <string>

#include "primitives/collectives.hpp"

namespace ringlab {

struct AlgorithmChoice {
  Collective collective = Collective::AllReduce;
  // The algorithm in effect: a row's name, or "auto".
  std::string algorithm;
  // Where it came from: "the article's", "RINGLAB_ALGORITHMS", "as chosen",
  // ...; empty for ringlab's default (the row's default_algorithm).
  std::string source;
  // The vector it runs on, for naming what auto picks; bytes_known false
  // where it is not known yet (a lesson says so before it runs).
  bool bytes_known = false;
  std::size_t bytes = 0;
  int ranks = 0;
  bool fewer_messages = false;
};

// "<collective> runs <algorithm> (<why>)", as in the examples above.
std::string algorithm_story(const AlgorithmChoice& choice);

}  // namespace ringlab
