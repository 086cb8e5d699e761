#include "tools/run_printer.hpp"

#include <algorithm>
#include <cstdio>

namespace ringlab::cli {

using namespace ringlab::sim;

std::string where(const Run& run, const Location& l) {
  if (l.region < 0) return l.count == 0 ? "(an empty token)" : "(unnamed memory)";
  const Region& r = run.regions[static_cast<std::size_t>(l.region)];
  return r.name + "[" + std::to_string(l.offset) + ":" + std::to_string(l.offset + l.count) + "]";
}

namespace {

std::string provenance_line(const Run& run, const Replay& replay, int region) {
  std::string out;
  for (const ProvRun& p : replay.provenance(region)) {
    if (!out.empty()) out += " | ";
    out += "[" + std::to_string(p.offset) + ":" + std::to_string(p.offset + p.count) + "] " +
           run.set(p.set).to_string();
  }
  return out;
}

void print_message(const Run& run, const Message& m, const StepPrinting& how) {
  std::string carries = m.payload.count ? run.set(run.runs(m.payload)[0].set).to_string() : "-";
  if (m.payload.count > 1) carries += ", ...";
  // A message no receive matched (a real run that failed) landed nowhere.
  const bool landed = m.delivered || m.to.region >= 0 || m.to.count > 0;
  std::printf("  rank %d -> rank %d: %s -> %s (%zu bytes, inputs %s)", m.src, m.dst,
              where(run, m.from).c_str(), landed ? where(run, m.to).c_str() : "(no receive)",
              m.bytes, carries.c_str());
  if (m.reduced)
    std::printf(", then %s into %s", std::string(op_name(m.reduce_op)).c_str(),
                where(run, run.writes[static_cast<std::size_t>(m.reduced_by_write)].dst).c_str());
  std::printf("%s\n", how.message_note ? how.message_note(m).c_str() : "");
}

}  // namespace

void print_buffers(const Run& run, const Replay& replay, const std::vector<std::string>& only,
                   const BufferText& text) {
  for (int r = 0; r < run.ranks; ++r) {
    std::vector<int> shown;
    for (int id : run.regions_of(r)) {
      const Region& region = run.regions[static_cast<std::size_t>(id)];
      const bool wanted = only.empty() || std::find(only.begin(), only.end(), region.name) != only.end();
      if (region.kind == RegionKind::User && region.count > 0 && wanted) shown.push_back(id);
    }
    const std::string& role = run.roles[static_cast<std::size_t>(r)];
    const std::string who = role == "rank " + std::to_string(r) ? "Rank " + std::to_string(r) : role;
    for (int id : shown) {
      const Region& region = run.regions[static_cast<std::size_t>(id)];
      const std::string what = shown.size() == 1 ? "data" : region.name;
      const std::string values =
          text ? text(id, replay, replay.position()) : replay.tensor(id).to_string();
      std::printf("%s has %s %s\n", who.c_str(), what.c_str(), values.c_str());
      std::printf("        inputs in it: %s\n", provenance_line(run, replay, id).c_str());
    }
  }
}

void print_steps(const Run& run, const StepPrinting& how) {
  bool any_data = false;
  std::size_t empty = 0;
  for (const Message& m : run.messages) {
    any_data = any_data || m.bytes > 0;
    empty += m.bytes == 0;
  }
  const bool hide = !how.show_empty && any_data && empty > 0;
  if (hide)
    std::printf(
        "# %zu of %zu messages carry 0 bytes (empty chunks: fewer elements than ranks) "
        "and are not shown; --show-empty shows them\n",
        empty, run.messages.size());
  Replay replay(run);
  replay.seek(0);
  std::printf("before the first message (step 0):\n");
  print_buffers(run, replay, {}, how.buffer_text);
  if (how.after_step) how.after_step(0);
  for (Step k = 1; k <= run.steps; ++k) {
    std::printf("\nstep %u:\n", k);
    std::size_t hidden = 0;
    for (const Message& m : run.messages_in(k)) {
      if (hide && m.bytes == 0) {
        ++hidden;
        continue;
      }
      print_message(run, m, how);
    }
    if (hidden > 0) std::printf("  (and %zu empty message%s)\n", hidden, hidden == 1 ? "" : "s");
    replay.seek(k);
    std::printf("after step %u:\n", k);
    print_buffers(run, replay, {}, how.buffer_text);
    if (how.after_step) how.after_step(k);
  }
}

}  // namespace ringlab::cli
