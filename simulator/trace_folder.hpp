// A real run's walkthroughs from the path a user gives: a trace file (one
// rank's, or a merged one), or the folder RINGLAB_TRACE=DIR (or the launcher's
// --trace) writes the ranks' files into. The ranks merge their files into
// DIR/trace.json only once every rank wrote its own, so a run that lost a
// rank leaves DIR/rank<r>.json alone: the folder reads them together.
#pragma once

#include <string>
#include <vector>

#include "simulator/walkthrough_file.hpp"

namespace ringlab::sim {

// path a file: its walkthroughs (read_walkthroughs). path a folder: its
// trace.json where there is one, else every rank<r>.json in it, by rank.
// Throws std::runtime_error saying what to give instead: for a folder with
// neither, and for a missing file whose folder holds rank files.
std::vector<RankWalkthroughs> read_run_walkthroughs(const std::string& path);

}  // namespace ringlab::sim
