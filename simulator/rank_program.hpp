// One virtual rank's part of a scenario, shared by the recorded path
// (simulate.cpp) and the message-level prediction path (traffic.cpp): its
// buffers, laid out as the collective's row says (primitives/collectives.hpp),
// filled and named where a recorder wants them, and the row's runner (the one
// ProcessGroup calls). Internal to simulator/.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "primitives/algorithms.hpp"
#include "primitives/collectives.hpp"
#include "simulator/record.hpp"
#include "simulator/recording_transport.hpp"

namespace ringlab::sim::detail {

// Throws std::invalid_argument, naming no rank, for what can be found before
// any rank starts: ranks outside 1..max_ranks, a root outside the world, an
// op the dtype cannot take, an algorithm the collective's table lacks. The
// resolved algorithm name ("" = the first of the table, which a walkthrough
// shows) is returned.
std::string validate(const Scenario& s, int max_ranks, std::string_view what);

// Elements per rank over all its user buffers (the root's, which has the most).
std::size_t user_elements(const Scenario& s);

class RankProgram {
 public:
  // inner: where the buffers come from; run_on: what the algorithm talks to
  // (inner itself, or a transport wrapping it); recorder: names the buffers
  // (may be null); fill: write the inputs (needs real memory).
  RankProgram(const Scenario& s, Transport& inner, Transport& run_on, RecordingTransport* recorder,
              bool fill)
      : s_(s), inner_(inner), run_on_(run_on), rec_(recorder), fill_(fill), rank_(inner.rank()) {}

  void run() {
    const CollectiveInfo& c = collective_info(s_.collective);
    const bool is_root = rank_ == s_.root;
    const Elems first = make(c.first, is_root);
    const Elems second = make(c.second, is_root);
    // Only collectives over P blocks get the block table: it has P entries
    // on each of P ranks (4 GiB at 16,384 ranks).
    auto has_blocks = [](const BufferSpec& b) {
      return b.extent == Extent::Blocks || b.extent == Extent::BlocksOnRoot;
    };
    const auto blocks = has_blocks(c.first) || has_blocks(c.second)
                            ? equal_blocks(s_.count, s_.ranks)
                            : std::vector<Chunk>{};
    Comm comm(run_on_, 0);
    c.run(comm, s_.algorithm,
          {.first = first,
           .second = second,
           .blocks = blocks,
           .second_blocks = blocks,
           .root = s_.root,
           .op = s_.op});
  }

 private:
  // The buffer `spec` describes (Elems{} where it is absent), its inputs
  // filled and named for provenance.
  Elems make(const BufferSpec& spec, bool is_root) {
    if (!spec.present(is_root)) return {};
    const std::size_t n = s_.count;
    const std::size_t count = spec.count(s_.ranks, n, is_root);
    const int r = rank_;
    switch (spec.input) {
      case Input::None:
        return make(count, spec.name, 0, 0, [](std::size_t) {
          return std::pair{-1, std::size_t{0}};
        });
      case Input::Whole:
        return make(count, spec.name, 0, count, [r](std::size_t i) { return std::pair{r, i}; });
      case Input::OwnBlock: {
        const std::size_t mine = static_cast<std::size_t>(r) * n;
        return make(count, spec.name, mine, n, [r, mine, n](std::size_t i) {
          return i >= mine && i < mine + n ? std::pair{r, i - mine} : std::pair{-1, std::size_t{0}};
        });
      }
      case Input::PerRank:
        // Block d is rank d's to receive: shown as rank d's input.
        return make(count, spec.name, 0, count, [n](std::size_t i) {
          return std::pair{static_cast<int>(i / n), i % n};
        });
    }
    throw std::logic_error("unknown Input");
  }

  // A user buffer of `count` elements; element i holds input(who(i)) (or 0
  // when who(i).first < 0); elements [input_offset, +input_count) are this
  // rank's input for provenance.
  template <typename Who>
  Elems make(std::size_t count, std::string_view name, std::size_t input_offset,
             std::size_t input_count, Who who) {
    Buffer buffer = inner_.allocate(count * element_size(s_.dtype));
    if (fill_) {
      const auto& input =
          s_.input ? s_.input : std::function<double(int, std::size_t)>(default_input);
      visit_dtype(s_.dtype, [&]<typename T>() {
        T* data = reinterpret_cast<T*>(buffer.storage.get());
        for (std::size_t i = 0; i < count; ++i) {
          const auto [rank, index] = who(i);
          data[i] = rank < 0 ? T{} : wrapped<T>(input(rank, index));  // int8's wrap
        }
      });
    }
    if (rec_)
      rec_->name_buffer(buffer.span(), std::string(name), s_.dtype, input_offset, input_count);
    Elems elems{buffer.storage.get(), count, s_.dtype};
    buffers_.push_back(std::move(buffer));
    return elems;
  }

  const Scenario& s_;
  Transport& inner_;
  Transport& run_on_;
  RecordingTransport* rec_;
  bool fill_;
  int rank_;
  std::vector<Buffer> buffers_;
};

}  // namespace ringlab::sim::detail
