// Why a case failed, told the way a learner needs it: the same case recorded
// by the simulator (record.hpp), the first wrong element of the first rank
// that went wrong, where each of its values came from step by step (the
// simulator's provenance: which ranks' inputs it holds), what it should
// hold, and a hint that follows from the shape of the mistake.
#pragma once

#include <string>

#include "exercises/stages.hpp"

namespace ringlab::exercises {

// The explanation of `failure` (a failure of any stage), each line indented
// by two spaces.
std::string explain(const Exercise& exercise, const Function& fn, const Failure& failure);

// "rank 0 waits for rank 1 (collective #0 step 2)" -> "... (step 2)": within
// an exercise, a message's step is all that tells it apart.
std::string plain_steps(const std::string& text);

// The simulator's deadlock report for a world where every rank is blocked
// receiving (watch.hpp): its closing question ("do the ranks run the same
// collectives in the same order?"), which the peers and steps answer, gives
// way to kReceiveFirst.
std::string receive_first_deadlock(const std::string& error);

}  // namespace ringlab::exercises
