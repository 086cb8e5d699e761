// ProcessGroup::run_collective: the row's runner with the algorithm in
// effect, told to a transport that observes collectives (one that records,
// primitives/collective_observer.hpp) around the algorithm.
#include <cstddef>
#include <string>

#include "primitives/collective_observer.hpp"
#include "primitives/process_group.hpp"

namespace ringlab {

namespace {

// One of the row's buffers as an observer sees it (collective_observer.hpp).
ObservedBuffer observed(const BufferSpec& spec, Elems elems, bool is_root, int rank,
                        std::size_t n) {
  ObservedBuffer buffer{spec.name, elems, spec.present(is_root)};
  switch (spec.input) {
    case Input::Whole:
    case Input::PerRank:
      buffer.input_count = elems.count;
      break;
    case Input::OwnBlock:
      buffer.input_offset = static_cast<std::size_t>(rank) * n;
      buffer.input_count = n;
      break;
    case Input::None:
      break;
  }
  return buffer;
}

}  // namespace

std::string ProcessGroup::algorithm_that_runs(Collective c, const CollectiveCall& call) const {
  const std::string name = algorithm(c);
  if (c != Collective::AllReduce || name != "auto") return name;
  return std::string(all_reduce_auto_choice(call.first.nbytes(), size(),
                                            transport_->prefers_fewer_messages()));
}

// A transport that observes collectives (one that records) hears of each one
// around the algorithm, and runs the algorithm it was told of (auto's choice
// made here, as all_reduce_auto makes it).
void ProcessGroup::run_collective(Collective c, Comm& comm, const CollectiveCall& call,
                                  std::size_t count) {
  auto* observer = dynamic_cast<CollectiveObserver*>(transport_.get());
  if (!observer) return collective_info(c).run(comm, algorithm(c), call);
  const CollectiveInfo& row = collective_info(c);
  const bool is_root = rank() == call.root;
  CollectiveStart start;
  start.collective = c;
  start.algorithm = algorithm_that_runs(c, call);
  start.count = count;
  start.dtype = call.first.count || !call.second.count ? call.first.dtype : call.second.dtype;
  start.op = call.op;
  start.root = row.rooted ? call.root : 0;
  start.first = observed(row.first, call.first, is_root, rank(), count);
  start.second = observed(row.second, call.second, is_root, rank(), count);
  observer->collective_started(start);
  try {
    row.run(comm, start.algorithm, call);
  } catch (...) {
    observer->collective_ended(false);
    throw;
  }
  observer->collective_ended(true);
}

}  // namespace ringlab
