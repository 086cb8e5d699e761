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
#include <map>
#include <span>
#include <unordered_set>
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
  struct ById {
    const std::vector<RankSet>* sets;
    std::size_t operator()(SetId id) const { return RankSetHash{}((*sets)[id]); }
  };
  struct SameSet {
    const std::vector<RankSet>* sets;
    bool operator()(SetId a, SetId b) const { return (*sets)[a] == (*sets)[b]; }
  };
  std::vector<RankSet>& sets_;
  std::unordered_set<SetId, ById, SameSet> ids_;
};

// ---- run-length provenance of one region ----------------------------------------
//
// runs: offset -> (count, set), covering [0, region count) without gaps.
class ProvState {
 public:
  ProvState() = default;
  explicit ProvState(std::span<const ProvRun> initial);

  // Appends the runs over [offset, offset + count), clipped, absolute offsets.
  void read(std::size_t offset, std::size_t count, std::vector<ProvRun>& out) const;

  // Replaces [offset, offset + count) by `runs` (which cover exactly it).
  void assign(std::size_t offset, std::size_t count, std::span<const ProvRun> runs);

 private:
  struct Piece {
    std::size_t count;
    SetId set;
  };
  void split(std::size_t at);
  // Merges the run starting at `at` into the one before it when equal.
  void coalesce(std::size_t at);
  std::map<std::size_t, Piece> runs_;
};

}  // namespace ringlab::sim
