// `ringlab replay FILE [--walkthrough K|NAME] [--list] [--timings [--model FILE]]`
//
// A real run's trace (`ringlab lesson/run --trace FILE`, RINGLAB_TRACE=DIR of
// a PyTorch script) replayed collective by collective: each printed from
// "before the first message" on exactly as `ringlab sim` prints the same
// collective, algorithm, world and data (tools/run_printer.hpp), from the
// walkthroughs the ranks recorded (simulator/real_run.hpp). --timings adds
// each step's measured time, the cost model's prediction and the slowest
// rank (simulator/real_timings.hpp).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "simulator/model_file.hpp"
#include "simulator/real_run.hpp"
#include "simulator/real_timings.hpp"
#include "simulator/trace_folder.hpp"
#include "tools/commands.hpp"
#include "tools/option_checks.hpp"
#include "tools/run_printer.hpp"

namespace ringlab::cli {

namespace {

using namespace ringlab::sim;

struct ReplayCommand {
  std::string file;
  std::string walkthrough;  // "" every one; a number from 1, or a name
  bool list = false;
  bool timings = false;
  std::string model_file;
  bool show_empty = false;
};

std::string list_ranks(const std::vector<int>& ranks) {
  std::string text;
  for (std::size_t i = 0; i < ranks.size(); ++i) text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

// The first elements of a sample as a Tensor prints them, and the rest said.
std::string sample_text(const RankBufferSamples& s, const SampledValues& v, const char* when) {
  if (!v.taken) return "(values not recorded: in device memory)";
  std::string text = "(values not recorded whole; " + std::string(when) + ": ";
  if (v.elements > 0 && v.bytes.size() == v.elements * element_size(s.dtype)) {
    Tensor t(s.dtype, {static_cast<std::int64_t>(v.elements)});
    std::memcpy(t.bytes().data(), v.bytes.data(), v.bytes.size());
    text += "the first " + std::to_string(v.elements) + " of " + std::to_string(s.count) +
            " elements " + t.to_string() + ", ";
  }
  char checksum[32];
  std::snprintf(checksum, sizeof checksum, "%016llx", static_cast<unsigned long long>(v.checksum));
  return text + "checksum " + checksum + ")";
}

// Where values were not kept whole: the samples, as the call started and
// as it returned; nothing in between.
BufferText sampled_buffers(const RealWalkthrough& w) {
  return [&w](int region, const Replay&, long long after_step) -> std::string {
    for (const RankBufferSamples& s : w.samples) {
      if (s.region != region) continue;
      if (after_step <= 0) return sample_text(s, s.before, "as the call started");
      if (after_step >= static_cast<long long>(w.run.steps))
        return sample_text(s, s.after, "as it returned");
    }
    return "(values not recorded)";
  };
}

bool missing(const RealWalkthrough& w, int rank) {
  return std::find(w.missing.begin(), w.missing.end(), rank) != w.missing.end();
}

// Where a message's fate is known from the traces: a rank that left none
// cannot say what it received.
std::string message_note(const RealWalkthrough& w, const Message& m) {
  if (missing(w, m.dst)) return " -- to rank " + std::to_string(m.dst) + ", which left no trace";
  return m.delivered ? "" : " -- never arrived";
}

void print_undelivered(const RealWalkthrough& w) {
  const Run& run = w.run;
  bool header = false;
  auto say_header = [&] {
    if (!header) std::printf("\nmessages that never arrived:\n");
    header = true;
  };
  for (const Message& m : run.messages) {
    if (m.delivered || missing(w, m.dst)) continue;
    say_header();
    std::printf("  rank %d -> rank %d: %s (%zu bytes), sent in step %u, never received\n", m.src,
                m.dst, where(run, m.from).c_str(), m.bytes, m.send_step);
  }
  for (const Awaited& a : run.awaited) {
    say_header();
    std::printf("  rank %d waited from step %u for %zu bytes from rank %d into %s: they never came\n",
                a.dst, a.step, a.bytes, a.src, where(run, a.to).c_str());
  }
}

void print_timing(const StepTiming& t) {
  if (!t.measured) {
    std::printf("  timing: no rank ran anything in this step (the cost model predicts %.3f us)\n",
                t.predicted_seconds * 1e6);
    return;
  }
  std::printf("  timing: measured %.3f us, the cost model predicts %.3f us; slowest rank %d "
              "(ended it last, %.3f us after its step before)\n",
              t.seconds * 1e6, t.predicted_seconds * 1e6, t.slowest_rank, t.slowest_seconds * 1e6);
}

void print_header(const RealWalkthrough& w, std::size_t k, std::size_t n) {
  std::printf("# walkthrough %zu of %zu: %s: %s\n", k + 1, n, w.name.c_str(),
              describe_collective(w.mark, w.ranks).c_str());
  std::printf("# the simulator's: %s\n", sim_command_for(w.mark, w.ranks).c_str());
  if (!w.missing.empty())
    std::printf("# rank(s) %s left no trace of it (stopped first): what they sent is shown as "
                "their receivers got it, from memory nobody named\n",
                list_ranks(w.missing).c_str());
  if (!w.not_started.empty())
    std::printf("# rank(s) %s failed before they started it: what they sent is shown as their "
                "receivers got it, from memory nobody named\n",
                list_ranks(w.not_started).c_str());
  if (!w.failed.empty())
    std::printf("# it failed on rank(s) %s: shown up to the failure\n", list_ranks(w.failed).c_str());
  if (!w.kept) {
    std::printf("# not kept in the trace: its events were past the trace's limit (--trace-limit)\n");
    return;
  }
  if (!w.run.values_recorded) std::printf("# %s\n", w.run.values_note.c_str());
}

void print_walkthrough(const ReplayCommand& c, const RealWalkthrough& w, std::size_t k,
                       std::size_t n, const CostModel& model) {
  print_header(w, k, n);
  if (!w.kept) return;
  StepPrinting how;
  how.show_empty = c.show_empty;
  if (!w.run.values_recorded) how.buffer_text = sampled_buffers(w);
  RunTimings timings;
  if (c.timings) {
    timings = real_timings(w, model);
    how.after_step = [&timings](Step step) { print_timing(timings.steps[step]); };
  }
  how.message_note = [&w](const Message& m) { return message_note(w, m); };
  print_steps(w.run, how);
  print_undelivered(w);
  if (c.timings)
    std::printf("\nmeasured %.3f us in all; the cost model predicts %.3f us\n",
                timings.seconds * 1e6, timings.predicted_seconds * 1e6);
}

// " (failed on rank(s) 0, 2)", " (rank(s) 1 left no trace)", "".
std::string fate(const RealWalkthrough& w) {
  std::string text;
  if (!w.failed.empty()) text += "failed on rank(s) " + list_ranks(w.failed);
  if (!w.not_started.empty())
    text += (text.empty() ? "" : "; ") + std::string("rank(s) ") + list_ranks(w.not_started) +
            " failed before it";
  if (!w.missing.empty())
    text += (text.empty() ? "" : "; ") + std::string("rank(s) ") + list_ranks(w.missing) +
            " left no trace";
  return text.empty() ? "" : " (" + text + ")";
}

void run_replay(const ReplayCommand& c) {
  const std::vector<RealWalkthrough> all = real_walkthroughs(read_run_walkthroughs(c.file));
  const auto picked = pick_walkthroughs(all, c.list ? "" : c.walkthrough, c.file);
  const CostModel model = c.model_file.empty() ? CostModel{} : load_cost_model(c.model_file);
  std::printf("# ringlab replay: %s: %zu walkthrough%s of a real run\n", c.file.c_str(),
              all.size(), all.size() == 1 ? "" : "s");
  if (c.list) {
    for (std::size_t i = 0; i < all.size(); ++i)
      std::printf("%3zu  %s: %s%s\n", i + 1, all[i].name.c_str(),
                  describe_collective(all[i].mark, all[i].ranks).c_str(),
                  fate(all[i]).c_str());
    return;
  }
  for (std::size_t i = 0; i < picked.size(); ++i) {
    if (i > 0) std::printf("\n");
    print_walkthrough(c, all[picked[i]], picked[i], all.size(), model);
  }
}

}  // namespace

void add_replay_command(CLI::App& app) {
  auto cmd = std::make_shared<ReplayCommand>();
  CLI::App* sub = app.add_subcommand(
      "replay",
      "step through a real run's trace (lesson/run --trace, RINGLAB_TRACE): every message and "
      "buffer, as `ringlab sim` shows a simulated run");
  sub->add_option("file", cmd->file,
                  "the trace file (Chrome JSON, as --trace writes it), or the folder of a "
                  "run's rank<r>.json files (RINGLAB_TRACE=DIR)")
      ->required();
  sub->add_option("--walkthrough", cmd->walkthrough,
                  "only this collective: its number (from 1) or its name (--list)");
  sub->add_flag("--list", cmd->list, "list the collectives, one a line");
  sub->add_flag("--timings", cmd->timings,
                "each step's measured time (the ranks' clocks), the cost model's prediction and "
                "the slowest rank");
  sub->add_option("--model", cmd->model_file,
                  "--timings: the cost model `ringlab sim --calibrate` saved (default: the "
                  "simulator's)");
  sub->add_flag("--show-empty", cmd->show_empty, "also the messages that carry 0 bytes");
  sub->callback([cmd] { run_replay(*cmd); });
}

}  // namespace ringlab::cli
