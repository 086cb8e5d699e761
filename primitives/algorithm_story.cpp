#include "primitives/algorithm_story.hpp"

#include "primitives/algorithms.hpp"

namespace ringlab {

std::string algorithm_story(const AlgorithmChoice& choice) {
  const Collective c = choice.collective;
  const std::string default_name(collective_info(c).default_algorithm);
  const bool picks_by_size = c == Collective::AllReduce;
  const std::string from = choice.source.empty() ? "ringlab's default" : choice.source;
  std::string ran = choice.algorithm;
  std::string why = from;
  if (picks_by_size && choice.algorithm == "auto") {
    if (choice.bytes_known) {
      ran = std::string(all_reduce_auto_choice(choice.bytes, choice.ranks, choice.fewer_messages));
      why = from + ", auto, picks it for " + std::to_string(choice.bytes) + " bytes on " +
            std::to_string(choice.ranks) + " ranks";
    } else {
      why = from + ", auto: it picks by size";
    }
  } else if (!choice.source.empty() && default_name == "auto") {
    why = from + "; ringlab's default, auto, picks by size";
  }
  return std::string(collective_name(c)) + " runs " + ran + " (" + why + ")";
}

}  // namespace ringlab
