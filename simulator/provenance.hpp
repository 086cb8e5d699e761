// Provenance bookkeeping for build_run (build_record.cpp): which ranks'
// inputs each element of a region contains, as it changes write by write.
//
//  - SetTable interns RankSets into Run::rank_sets, so equal sets share one
//    id and a union of two known ids is computed once per distinct result.
//  - ProvState holds one region's provenance as runs of equal elements
//    (offset -> count, set id), covering the region without gaps.
//
// Internal to simulator/: the record (record.hpp) stores the ids and runs
// these produce, never these classes.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "simulator/record.hpp"

namespace ringlab::sim {

// ---- interned provenance sets -------------------------------------------------

struct RankSetHash {
  std::size_t operator()(const RankSet& s) const;
};

class SetTable {
 public:
  // Takes over `sets` (Run::rank_sets): it restarts as {empty set} = kNoInputs.
  explicit SetTable(std::vector<RankSet>& sets);
  SetId intern(RankSet s);
  SetId single(int rank) { return intern(RankSet::single(rank)); }
  SetId unite(SetId a, SetId b);

 private:
  // Open addressing with linear probing (a 1024-rank ring interns a million
  // sets: 8 bytes a slot instead of a node each).
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  // A slot: the low 32 bits of the set's hash (which also pick the slot, so
  // growing never looks at a set) and its id.
  static std::uint64_t slot(SetId id, std::size_t hash) {
    return (std::uint64_t{static_cast<std::uint32_t>(hash)} << 32) | id;
  }
  void grow();
  std::vector<RankSet>& sets_;
  std::vector<std::uint64_t> slots_;
};

// ---- run-length provenance of one region ----------------------------------------
//
// runs: sorted by offset, covering [0, region count) without gaps; adjacent
// runs where new ones meet old ones merge when their sets are equal. A flat
// vector: a region holds at most a few runs per rank, and a write replaces
// a few in place.
class ProvState {
 public:
  ProvState() = default;
  explicit ProvState(std::span<const ProvRun> initial);

  // Appends the runs over [offset, offset + count), clipped, absolute offsets.
  void read(Elem offset, Elem count, std::vector<ProvRun>& out) const;

  // Replaces [offset, offset + count) by `runs` (which cover exactly it);
  // scratch: any vector, reused from call to call to spare an allocation.
  void assign(Elem offset, Elem count, std::span<const ProvRun> runs,
              std::vector<ProvRun>& scratch);

 private:
  std::size_t run_at(Elem element) const;  // the run holding it (0 if none)
  std::vector<ProvRun> runs_;
};

}  // namespace ringlab::sim
