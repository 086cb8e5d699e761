// Blame: which rank a wait that ran out of time names (see blame.hpp).
#include "transport/tcp/blame.hpp"

#include <algorithm>

namespace ringlab::tcp {

BlameBook::BlameBook(int rank, int size)
    : rank_(rank),
      said_(static_cast<std::size_t>(size), kUnheard),
      gave_up_(static_cast<std::size_t>(size), false) {
  waits_.reserve(4);  // no allocation per wait
}

BlameBook::OnRecord::OnRecord(BlameBook& book, const Op* op) : book_(book), op_(op) {
  book_.waits_.push_back(op);
}

BlameBook::OnRecord::~OnRecord() {
  book_.waits_.erase(std::find(book_.waits_.begin(), book_.waits_.end(), op_));
}

bool BlameBook::heard(int peer, const Waiting& waiting) {
  const int size = static_cast<int>(said_.size());
  said_[static_cast<std::size_t>(peer)] =
      waiting.waiting_for >= 0 && waiting.waiting_for < size ? waiting.waiting_for : -1;
  // A question stands until that rank answers one of this rank's.
  gave_up_[static_cast<std::size_t>(peer)] = waiting.asking;
  return waiting.asking;
}

void BlameBook::start_asking(int peer) {
  for (std::size_t q = 0; q < said_.size(); ++q)
    if (!gave_up_[q]) said_[q] = kUnheard;
  said_[static_cast<std::size_t>(rank_)] = peer;
}

BlameBook::ChainEnd BlameBook::follow(int first, std::vector<int>& chain) const {
  chain.clear();
  for (int at = first;;) {
    chain.push_back(at);
    const int next = said_[static_cast<std::size_t>(at)];
    if (next == kUnheard) return ChainEnd::Unanswered;
    if (next < 0) return ChainEnd::WaitsForNobody;
    if (next == rank_ || std::find(chain.begin(), chain.end(), next) != chain.end()) {
      chain.push_back(next);
      return ChainEnd::Circle;
    }
    at = next;
  }
}

bool BlameBook::answered(int first) const {
  std::vector<int> chain;
  return follow(first, chain) != ChainEnd::Unanswered;
}

TimeoutVerdict BlameBook::verdict(int first, const std::string& timed_out,
                                  Duration patience) const {
  std::vector<int> chain;
  const ChainEnd end = follow(first, chain);
  // "Rank 3 waits for rank 0, and rank 0 waits for rank 2"
  std::string waits;
  for (std::size_t i = 0; i + 1 < chain.size(); ++i)
    waits += std::string(i == 0                  ? "Rank "
                         : i + 2 == chain.size() ? ", and rank "
                                                 : ", rank ") +
             std::to_string(chain[i]) + " waits for rank " + std::to_string(chain[i + 1]);
  const std::string me = "rank " + std::to_string(rank_);
  const int last = chain.back();
  const std::string blamed = "rank " + std::to_string(last);
  switch (end) {
    case ChainEnd::Unanswered: {
      const std::string silent = " did not answer within " + std::to_string(patience.count()) +
                                 " ms when asked whom it waits for (stopped, hung, or busy "
                                 "outside ringlab?)";
      if (chain.size() == 1) return {last, timed_out + " Rank " + std::to_string(last) + silent};
      return {last, me + ": " + blamed + " did not answer: " + timed_out + " " + waits + ", which" +
                        silent};
    }
    case ChainEnd::WaitsForNobody: {
      const std::string idle =
          " answered that it waits for no rank: it is not in this collective (did the ranks run "
          "the same collectives in the same order?)";
      if (chain.size() == 1) return {last, timed_out + " Rank " + std::to_string(last) + idle};
      return {last, me + ": " + blamed + " is not taking part: " + timed_out + " " + waits +
                        ", which" + idle};
    }
    case ChainEnd::Circle:
      break;
  }
  return {first, timed_out + " " + waits +
                     ": the ranks wait for each other (did they run the same collectives in the "
                     "same order?)"};
}

}  // namespace ringlab::tcp
