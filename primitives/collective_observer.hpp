// What a ProcessGroup tells the transport it runs on about each collective,
// when that transport wants to know: a transport that records
// (simulator/recording_transport.hpp) cuts its log into one walkthrough per
// collective with it, so that `ringlab replay` can show a real run step by
// step as `ringlab sim` shows a simulated one. Other transports are not
// asked (the group looks for this interface on its transport once per call).
//
// The buffers are those the collective's row runs on (collectives.hpp): the
// algorithm's `first` and `second`, named as the row names them ("buf",
// "send", ...), with the elements that hold this rank's input, exactly as
// the simulator lays out and names them for the same call. Copies a group
// makes before or after the algorithm (packing a list into one buffer) are
// outside the walkthrough, as they are outside the simulated one.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "ops/dtype.hpp"
#include "ops/reduce_op.hpp"
#include "primitives/collectives.hpp"

namespace ringlab {

// One of the algorithm's buffers as a collective starts.
struct ObservedBuffer {
  std::string_view name;  // the row's: "buf", "send", "recv", ...
  Elems elems{};          // count 0 where the row has no such buffer on this rank
  bool present = false;   // the row has it on this rank (BufferSpec::present)
  // Elements [input_offset, input_offset + input_count) are this rank's input.
  std::size_t input_offset = 0, input_count = 0;
};

struct CollectiveStart {
  Collective collective = Collective::AllReduce;
  std::string algorithm;  // the one that runs: auto's choice, not "auto"
  // Elements of the tensor each rank passes, as the simulator's Scenario::count.
  std::size_t count = 0;
  DType dtype = DType::Float32;
  ReduceOp op = ReduceOp::SUM;
  int root = 0;
  ObservedBuffer first, second;
};

class CollectiveObserver {
 public:
  // Right before the algorithm runs, and right after it returns or throws
  // (ok false). Must not throw: recording never fails a collective.
  virtual void collective_started(const CollectiveStart& start) noexcept = 0;
  virtual void collective_ended(bool ok) noexcept = 0;

 protected:
  ~CollectiveObserver() = default;
};

}  // namespace ringlab
