// Part of the transport conformance suite: every algorithm of every
// collective (primitives/registry.cpp) runs on the binding's transport, at
// each of the binding's algorithm_worlds and at 0, 1, 997 and 1 M elements,
// through the collective table's runner (CollectiveInfo::run), which also
// checks that the algorithm finished every request it made (primitives/
// comm.hpp, rule 4). On nccl_rules this is the check that every algorithm
// keeps NCCL's rules; on the others, that the transport runs them all.
//
// Inputs and results are closed forms: rank r's element j is
// v(r, j) = 1000 (r + 1) + j % 997 (int32), so a sum over P ranks is
// 500 P (P + 1) + P (j % 997). List collectives (Blocks extents) take blocks
// of the size, except at 1 M, where the whole buffer is 1 M elements (as
// nccl-tests counts), so that 9 ranks stay within memory.
//
// One world per size: every case runs in it, one collective after another,
// as a program would call them. A case that throws ends that world (the
// failure names the case); wrong results are one CHECK per case and rank.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "primitives/algorithms.hpp"
#include "primitives/collectives.hpp"
#include "transport_conformance.hpp"

using namespace ringlab;
using namespace ringlab::conformance;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kBig = std::size_t{1} << 20;
constexpr std::size_t kSizes[] = {0, 1, 997, kBig};

int v(int rank, std::size_t j) { return 1000 * (rank + 1) + static_cast<int>(j % 997); }
int sum_v(int P, std::size_t j) { return 500 * P * (P + 1) + P * static_cast<int>(j % 997); }

// Elements per block of a collective whose buffers are `extent`s.
std::size_t block_of(const CollectiveInfo& row, std::size_t n, int P) {
  const bool lists = row.first.extent == Extent::Blocks ||
                     row.first.extent == Extent::BlocksOnRoot ||
                     row.second.extent == Extent::Blocks ||
                     row.second.extent == Extent::BlocksOnRoot;
  return lists && n >= kBig ? n / static_cast<std::size_t>(P) : n;
}

// The buffer one BufferSpec describes, filled as its `input` says.
std::vector<int> initial(const BufferSpec& spec, int P, int r, std::size_t n, bool is_root) {
  std::vector<int> values(spec.count(P, n, is_root), -1);
  if (values.empty()) return values;
  switch (spec.input) {
    case Input::None:
      break;
    case Input::Whole:
      for (std::size_t j = 0; j < values.size(); ++j) values[j] = v(r, j);
      break;
    case Input::OwnBlock:
      for (std::size_t i = 0; i < n; ++i) values[static_cast<std::size_t>(r) * n + i] = v(r, i);
      break;
    case Input::PerRank:  // block d is for rank d
      for (int d = 0; d < P; ++d)
        for (std::size_t i = 0; i < n; ++i) values[static_cast<std::size_t>(d) * n + i] = v(d, i);
      break;
  }
  return values;
}

// What the closed form says rank r's buffers hold afterwards; an empty
// optional-like flag (`checked` false) where the collective defines nothing.
struct Expected {
  bool first_checked = false, second_checked = false;
  std::vector<int> first, second;
};

Expected expected_for(const CollectiveInfo& row, int P, int r, std::size_t n, int root) {
  Expected e;
  const auto uP = static_cast<std::size_t>(P);
  auto blocks = [&](auto value_of) {
    std::vector<int> out(uP * n);
    for (std::size_t s = 0; s < uP; ++s)
      for (std::size_t i = 0; i < n; ++i) out[s * n + i] = value_of(static_cast<int>(s), i);
    return out;
  };
  auto whole = [&](auto value_of) {
    std::vector<int> out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = value_of(i);
    return out;
  };
  switch (row.id) {
    case Collective::Broadcast:
      e.first_checked = true;
      e.first = whole([&](std::size_t i) { return v(root, i); });
      break;
    case Collective::Scatter:
      e.second_checked = true;
      e.second = whole([&](std::size_t i) { return v(r, i); });
      break;
    case Collective::Gather:
      e.second_checked = r == root;
      if (r == root) e.second = blocks([](int s, std::size_t i) { return v(s, i); });
      break;
    case Collective::Reduce:
    case Collective::AllReduce:
      e.first_checked = row.id == Collective::AllReduce || r == root;
      e.first = whole([&](std::size_t i) { return sum_v(P, i); });
      break;
    case Collective::AllGather:
      e.first_checked = true;
      e.first = blocks([](int s, std::size_t i) { return v(s, i); });
      break;
    case Collective::ReduceScatter:  // only block r is defined
      e.first_checked = true;
      e.first = whole([&](std::size_t i) { return sum_v(P, static_cast<std::size_t>(r) * n + i); });
      break;
    case Collective::AllToAll:  // block s comes from rank s, its block r
      e.second_checked = true;
      e.second = blocks([&](int s, std::size_t i) {
        return v(s, static_cast<std::size_t>(r) * n + i);
      });
      break;
    case Collective::Barrier:
      break;
  }
  return e;
}

std::string mismatch(const std::vector<int>& want, const std::vector<int>& got) {
  if (want.size() != got.size())
    return std::to_string(got.size()) + " elements, expected " + std::to_string(want.size());
  std::size_t wrong = 0, first = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (want[i] != got[i] && wrong++ == 0) first = i;
  if (wrong == 0) return "";
  return std::to_string(wrong) + " of " + std::to_string(want.size()) + " elements wrong; [" +
         std::to_string(first) + "] is " + std::to_string(got[first]) + ", expected " +
         std::to_string(want[first]);
}

// One collective with one algorithm at one size, on one rank.
void run_case(const Binding& b, Transport& t, const CollectiveInfo& row, const std::string& name,
              std::size_t size, std::uint64_t sequence) {
  const int P = t.size();
  const int r = t.rank();
  const int root = row.rooted ? P - 1 : 0;
  const bool is_root = r == root;
  const std::size_t n = block_of(row, size, P);
  const std::string what = std::string(row.name) + "[" + name + "] P=" + std::to_string(P) +
                           " n=" + std::to_string(n) + " rank " + std::to_string(r);
  Memory memory(b, t);
  const Buffer first = memory.holding(initial(row.first, P, r, n, is_root));
  const Buffer second = memory.holding(initial(row.second, P, r, n, is_root));
  const auto blocks = equal_blocks(n, P);
  CollectiveCall call;
  call.first = {first.storage.get(), first.size / sizeof(int), DType::Int32};
  call.second = {second.storage.get(), second.size / sizeof(int), DType::Int32};
  if (row.first.extent == Extent::Blocks || row.first.extent == Extent::BlocksOnRoot)
    call.blocks = blocks;
  if (row.second.extent == Extent::Blocks) call.second_blocks = blocks;
  call.root = root;
  try {
    Comm comm(t, sequence);
    row.run(comm, name, call);
  } catch (const std::exception& error) {
    FAIL_CHECK(what << " threw: " << std::string(error.what()));
    throw;
  }
  const Expected e = expected_for(row, P, r, n, root);
  if (e.first_checked) {
    std::vector<int> got = memory.read(first);
    if (row.id == Collective::ReduceScatter)
      got = std::vector<int>(got.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r) * n),
                             got.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r + 1) * n));
    const std::string wrong = mismatch(e.first, got);
    CHECK_MESSAGE(wrong.empty(), what << ": " << row.first.name << ": " << wrong);
  }
  if (e.second_checked) {
    const std::string wrong = mismatch(e.second, memory.read(second));
    CHECK_MESSAGE(wrong.empty(), what << ": " << row.second.name << ": " << wrong);
  }
}

}  // namespace

TEST_CASE(
    "every algorithm of every collective, at every world size the binding sweeps, at 0, 1, 997 "
    "and 1 M elements, gives the closed form and finishes every request it made") {
  for (const Binding& b : bindings()) {
    for (int P : b.algorithm_worlds) {
      if (P > b.max_ranks) {
        MESSAGE(b.name << ": world " << P << " skipped, it can start " << b.max_ranks << " ranks");
        continue;
      }
      CAPTURE(b.name);
      CAPTURE(P);
      const auto outcomes = b.run(P, 20s, [&b](Transport& t) {
        std::uint64_t sequence = 1;
        for (const CollectiveInfo& row : collective_table())
          for (const std::string& name : algorithm_names(row.id))
            for (std::size_t size : kSizes) {
              run_case(b, t, row, name, size, sequence++);
              if (row.id == Collective::Barrier) break;  // no size
            }
      });
      for (std::size_t rank = 0; rank < outcomes.size(); ++rank)
        CHECK_MESSAGE(outcomes[rank].kind == RankOutcome::Kind::Finished,
                      b.name << " P=" << P << " rank " << rank << ": " << outcomes[rank].what);
    }
  }
}
