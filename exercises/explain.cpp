#include "exercises/explain.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>

#include "exercises/record.hpp"

namespace ringlab::exercises {

namespace {

// One write to the element being explained.
struct Touch {
  const sim::Write* write;
  std::string what;   // "received from rank 1 (sent as step 0), reduced into it (sum)"
  std::string value;  // after the write, "" if values were not recorded
  sim::RankSet before, after;
};

bool covers(const sim::Location& at, int region, std::size_t element) {
  return at.region == region && element >= at.offset && element < at.offset + at.count;
}

const sim::RankSet& set_at(const sim::Run& run, sim::RunSpan span, std::size_t element) {
  for (const sim::ProvRun& r : run.runs(span))
    if (element >= r.offset && element < r.offset + r.count) return run.set(r.set);
  return run.set(sim::kNoInputs);
}

std::string value_at(const sim::Run& run, std::size_t offset, std::size_t element) {
  if (!run.values_recorded) return "";
  double value = visit_dtype(run.dtype, [&]<typename T>() {
    return static_cast<double>(load_element<T>(run.values.data() + offset, element));
  });
  return format_value(value, run.dtype);
}

std::string step_of(Tag tag) { return std::to_string(tag & 0xFFFFF); }

// Where the data of a local copy or reduction came from: the message that
// last landed in its source, if one did.
std::string local_source(const sim::Run& run, std::size_t w, std::size_t element) {
  const sim::Write& write = run.writes[w];
  const std::size_t at = write.src.offset + (element - write.dst.offset);
  const sim::Region& region = run.regions[static_cast<std::size_t>(write.src.region)];
  for (std::size_t i = w; i-- > 0;) {
    const sim::Write& earlier = run.writes[i];
    if (earlier.rank != write.rank || !covers(earlier.dst, write.src.region, at)) continue;
    if (earlier.kind != sim::WriteKind::Receive) break;
    const sim::Message& m = run.messages[static_cast<std::size_t>(earlier.message)];
    return "what arrived from rank " + std::to_string(m.src) + " (sent as step " + step_of(m.tag) +
           ") in " + region.name;
  }
  return region.name + "[" + std::to_string(at) + "]";
}

std::vector<Touch> history(const sim::Run& run, int rank, int region, std::size_t element) {
  std::vector<Touch> touches;
  for (std::size_t w = 0; w < run.writes.size(); ++w) {
    const sim::Write& write = run.writes[w];
    if (write.rank != rank || !covers(write.dst, region, element)) continue;
    const std::size_t local = element - write.dst.offset;
    Touch touch{&write, "", "", set_at(run, write.before, element),
                set_at(run, write.after, element)};
    if (run.values_recorded) touch.value = value_at(run, run.write_values[w].after, local);
    switch (write.kind) {
      case sim::WriteKind::Receive: {
        const sim::Message& m = run.messages[static_cast<std::size_t>(write.message)];
        touch.what = "received from rank " + std::to_string(m.src) + " (sent as step " +
                     step_of(m.tag) + "), replacing what was there";
        break;
      }
      case sim::WriteKind::Copy:
        touch.what = "copied from " + local_source(run, w, element);
        break;
      case sim::WriteKind::Reduce:
        touch.what = "reduced (" + std::string(op_name(write.op)) + ") with " +
                     local_source(run, w, element);
        break;
      case sim::WriteKind::Divide:
        touch.what = "divided by the world size";
        break;
    }
    touches.push_back(std::move(touch));
  }
  return touches;
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::string text;
  for (int r : ranks) text += (text.empty() ? "r" : "+r") + std::to_string(r);
  return text.empty() ? "-" : text;
}

bool reduces(Shape shape) {
  return shape == Shape::PingPong || shape == Shape::BlocksReduce || shape == Shape::AllReduce ||
         shape == Shape::Buckets;
}

// ---- the hints ----------------------------------------------------------------------

std::string values_hint(const Exercise& exercise, const Case& c, const sim::Run& run, int rank,
                        const RankOutcome& o, const std::vector<int>& got,
                        const std::vector<int>& expected, const std::vector<Touch>& touches) {
  std::vector<int> extra, missing;
  std::set_difference(got.begin(), got.end(), expected.begin(), expected.end(),
                      std::back_inserter(extra));
  std::set_difference(expected.begin(), expected.end(), got.begin(), got.end(),
                      std::back_inserter(missing));
  if (run.messages.empty()) return "no rank sent a single message: is the function still empty?";
  if (got.empty())
    return "nothing ever arrived in this element: a message meant for it was received into "
           "another place, or never received.";
  if (!extra.empty())
    return "it holds the input of " + ranks_text(extra) +
           ", which does not belong here: a message went to the wrong peer, or landed in the "
           "wrong chunk. Check whom each step sends to and receives from.";
  if (!missing.empty() && touches.empty())
    return "nothing ever wrote this element after the start: no step received or reduced into "
           "the chunk that holds it, so it misses " +
           ranks_text(missing) +
           ". Check the chunk indices step by step (write them out for P = 3).";
  if (!missing.empty()) {
    const bool reduced_anything = std::any_of(
        run.writes.begin(), run.writes.end(),
        [&](const sim::Write& w) { return w.rank == rank && w.kind == sim::WriteKind::Reduce; });
    if (reduces(exercise.shape) && !reduced_anything)
      return "rank " + std::to_string(rank) +
             " never reduces: what arrives must be combined with what the rank holds, "
             "comm.reduce(op, mine, received); receiving straight into buf, or copying, throws "
             "the rank's own contribution away. It misses " +
             ranks_text(missing) + ".";
    for (const Touch& t : touches) {
      const bool replaced =
          t.write->kind == sim::WriteKind::Receive || t.write->kind == sim::WriteKind::Copy;
      if (replaced && t.before.unite(t.after) != t.after)
        return "in step " + std::to_string(t.write->step) + " what arrived (" +
               t.after.to_string() + ") replaced a value that held other inputs (" +
               t.before.to_string() +
               "): it should have been reduced into it, or landed in another chunk. It misses " +
               ranks_text(missing) + ".";
    }
    return "it misses the inputs of " + ranks_text(missing) +
           ": in some step the chunk that was sent or reduced was not the one this element "
           "needed. Check the chunk indices step by step (write them out for P = 3).";
  }
  if (exercise.shape == Shape::Buckets &&
      std::fabs(o.held - o.expected * c.ranks) <= 1e-6 * std::fabs(o.held))
    return "the gradients were summed but not averaged: DDP divides every bucket by the world "
           "size after its all-reduce.";
  return "every rank's input is there, but one of them was reduced in more than once: a chunk "
         "was reduced twice (check the chunk indices), or a partial result was sent on and "
         "added again.";
}

std::string error_hint(const std::string& error) {
  if (error.find(kReceiveFirst) != std::string::npos)
    return "every rank is blocked receiving: each receives before it sends, so no message is "
           "ever sent (the peers and the steps may well be right). Send first on some ranks "
           "(even ranks send, then receive; odd ranks receive, then send), or use "
           "comm.sendrecv, which posts both at once.";
  if (error.find("your loop never ends") != std::string::npos)
    return "your loop never ends: every loop's counter must move on (++s) and its condition "
           "must become false; count the steps for P = 3 by hand.";
  if (error.find("ran out of memory") != std::string::npos)
    return "a case's buffers are at most 100003 elements per rank: allocate scratch of a "
           "chunk's or a buffer's size (comm.scratch), not more.";
  if (error.find("deadlock") != std::string::npos)
    return "every rank above waits for a message that nobody will send: in each step, the rank "
           "you receive from must be the rank that sends to you, with the same step number, and "
           "every send needs its receive.";
  if (error.find("bytes from rank") != std::string::npos)
    return "the two sides of a message disagree on its size: in a step, the sender's chunk and "
           "the receiver's chunk must be the same chunk.";
  return "the error above came from inside your function.";
}

std::string backend_hint(const std::string& stage) {
  if (stage == "nccl_rules")
    return "it passes in the simulator, where a send never waits and steps match messages, but "
           "not under NCCL's rules: there nothing moves until a rank waits, a blocking send "
           "completes only once its receive is posted, and the messages between two ranks match "
           "in the order they are posted, whatever their steps. If every rank sends (comm.send) "
           "before it receives, every rank waits for a receive nobody has posted: use sendrecv, "
           "or post the receive (irecv) first. If two messages go to one peer, receive them in "
           "the order they were sent.";
  return "it passes in the simulator but not on " + stage +
         ": look for a buffer changed or reused before the wait of its isend or irecv, or a "
         "scratch buffer freed too early.";
}

std::string explain_values(const Exercise& exercise, const Case& c, const Recorded& rec, int rank) {
  const sim::Run& run = *rec.run;
  const RankOutcome& o = rec.ranks[static_cast<std::size_t>(rank)];
  const int region = run.buffer_of(rank, o.buffer_name);
  sim::Replay replay(run);
  replay.seek(run.steps);
  const std::vector<int> got = replay.provenance_at(region, o.index).ranks();
  const std::vector<int> expected = expected_sources(exercise, c, rank, o.buffer, o.index);
  const std::string element =
      "rank " + std::to_string(rank) + "'s " + o.buffer_name + "[" + std::to_string(o.index) + "]";
  std::string text = "  in the simulator " + element + " ends holding " +
                     format_value(o.held, c.dtype) + ", the inputs of " + ranks_text(got) +
                     "; it should hold " + format_value(o.expected, c.dtype) + ", the inputs of " +
                     ranks_text(expected) + ".\n";
  const std::vector<Touch> touches = history(run, rank, region, o.index);
  text += "  " + element + " step by step (the steps of `ringlab exercise show " +
          std::string(exercise.name) + "`):\n";
  const std::string start =
      run.values_recorded ? value_at(run, run.regions[std::size_t(region)].initial_values, o.index)
                          : "";
  std::string first_set = "-";
  for (const sim::ProvRun& r : run.regions[std::size_t(region)].initial_provenance)
    if (o.index >= r.offset && o.index < r.offset + r.count) first_set = run.set(r.set).to_string();
  char line[160];
  std::snprintf(line, sizeof line, "    %-8s %8s  %-12s %s\n", "start", start.c_str(),
                first_set.c_str(), first_set == "-" ? "nothing yet" : "the rank's input");
  text += line;
  for (const Touch& t : touches) {
    std::snprintf(line, sizeof line, "    step %-3u %8s  %-12s ", t.write->step, t.value.c_str(),
                  t.after.to_string().c_str());
    text += line + t.what + "\n";
  }
  if (touches.empty()) text += "    (nothing ever wrote it)\n";
  text += "  hint: " + values_hint(exercise, c, run, rank, o, got, expected, touches) + "\n";
  return text;
}

// Whether fn gets case c right in the simulator.
bool passes(const Exercise& exercise, const Function& fn, const Case& c) {
  const Recorded rec = record_case(exercise, fn, c, /*values=*/false);
  return rec.error.empty() && std::all_of(rec.ranks.begin(), rec.ranks.end(),
                                          [](const RankOutcome& o) { return o.ok(); });
}

// When the same case passes in the exercise's first dtype, or with SUM, the
// dtype or the op is the mistake, whatever the provenance says (a loop of
// its own over the elements writes nothing the simulator sees).
std::string variant_hint(const Exercise& exercise, const Function& fn, const Case& c,
                         const RankOutcome& o) {
  const DType first = cases_for(exercise, c.ranks, false).front().dtype;
  Case other = c;
  other.dtype = first;
  const std::string mine(dtype_name(c.dtype)), theirs(dtype_name(first));
  if (c.dtype != first && op_applies(c.op, first) && passes(exercise, fn, other))
    return "the same case in " + theirs + " passes, but not in " + mine +
           ": your code seems to assume the element type. Elems know theirs: slice(offset, "
           "count) counts elements, and comm.reduce and comm.copy combine them as buf.dtype "
           "says; a loop of your own over int64_t (or 8-byte elements) reads " +
           mine + " buffers wrong.";
  other = c;
  other.op = ReduceOp::SUM;
  if (c.op == ReduceOp::SUM || !passes(exercise, fn, other)) return "";
  const std::string op(op_name(c.op));
  if (c.op == ReduceOp::AVG && std::fabs(o.held - o.expected * c.ranks) <= 1e-6 * std::fabs(o.held))
    return "summed but not averaged: for AVG comm.reduce adds, and the function divides by P at "
           "the end: comm.transport().divide(part.dtype, part.bytes(), comm.size()) on the part "
           "of buf that holds its result.";
  return "the same case with op sum passes, but not with op " + op +
         ": every rank's input is there, but not combined with " + op +
         ", the op the caller asked for: pass op on to comm.reduce instead of a fixed "
         "ReduceOp::SUM" +
         (c.op == ReduceOp::AVG ? ", and divide by P at the end for AVG." : ".");
}

}  // namespace

std::string explain(const Exercise& exercise, const Function& fn, const Failure& failure) {
  if (failure.case_number == 0) {
    // Which case failed is not known here: the simulator runs the world's
    // cases, the large one too, and explains the first that fails there.
    const int world[] = {failure.c.ranks};
    const StageResult simulated = check_simulated(exercise, fn, world, /*large=*/true);
    if (!simulated.failure) return "  hint: " + backend_hint(failure.stage) + "\n";
    return "  the simulator, on the same world: " + describe(exercise, *simulated.failure) +
           explain(exercise, fn, *simulated.failure);
  }
  const Case& c = failure.c;
  const Recorded rec = record_case(exercise, fn, c, /*values=*/true);
  // What the simulator says that the failure above has not said already.
  const bool same_stage = failure.stage == kSimulatorStage;
  std::string text;
  if (!rec.error.empty()) {
    if (!same_stage) text += "  the simulator, on the same case: " + plain_steps(rec.error) + "\n";
    text += "  hint: " + error_hint(rec.error) + "\n";
    text += "  the idea: " + std::string(exercise.hint) + "\n";
    return text;
  }
  for (std::size_t r = 0; r < rec.ranks.size(); ++r) {
    const RankOutcome& o = rec.ranks[r];
    if (o.ok()) continue;
    if (!o.not_heard.empty()) {
      if (!same_stage)
        text += "  in the simulator " + describe(o, static_cast<int>(r), c.dtype) + ".\n";
      text +=
          "  hint: a rank hears from another only through a chain of messages from it: "
          "send and receive in every round, and run all ceil(log2 P) rounds.\n";
      return text;
    }
    const std::string variant = variant_hint(exercise, fn, c, o);
    if (!variant.empty()) return text + "  hint: " + variant + "\n";
    text += explain_values(exercise, c, rec, static_cast<int>(r));
    text += "  the idea: " + std::string(exercise.hint) + "\n";
    return text;
  }
  text += "  hint: " + backend_hint(failure.stage) + "\n";
  return text;
}

std::string receive_first_deadlock(const std::string& error) {
  static constexpr std::string_view question = " do the ranks run the same collectives in the same order?";
  std::string text = error;
  const std::size_t at = text.rfind(question);
  if (at != std::string::npos) text.erase(at);
  return text + " " + kReceiveFirst + ".";
}

std::string plain_steps(const std::string& text) {
  // "collective #0 step 3" -> "step 3": an exercise's function is one collective.
  std::string out;
  std::size_t at = 0;
  while (true) {
    const std::size_t found = text.find("collective #", at);
    if (found == std::string::npos) break;
    std::size_t end = found + 12;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    if (end < text.size() && text[end] == ' ') ++end;
    out += text.substr(at, found - at);
    at = end;
  }
  return out + text.substr(at);
}

}  // namespace ringlab::exercises
