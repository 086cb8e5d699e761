#include "exercises/supervise.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "exercises/evidence.hpp"
#include "exercises/process.hpp"
#include "exercises/stages.hpp"
#include "store/token_proof.hpp"

namespace ringlab::exercises {

namespace {

using Clock = std::chrono::steady_clock;

std::string join(const std::vector<int>& ranks) {
  std::string text;
  for (int r : ranks) text += (text.empty() ? "" : ", ") + std::to_string(r);
  return text;
}

// What the checker expects back from the program, and what came back.
class Ledger {
 public:
  Ledger(const Exercise& exercise, std::vector<std::string> stages, const RunKey& key)
      : exercise_(exercise), stages_(std::move(stages)), key_(key) {}

  void take(const Record& r) {
    if (r.kind == Record::Kind::Phase) phase_ = r.id.stage;
    if (r.kind == Record::Kind::World) {
      stage_ = r.id.stage;
      world_ = r.id.ranks;
      phase_.clear();
    }
    if (!expected(r.id)) return;  // junk, or a case the program made up: ignored
    Slot& slot = slots_[r.id];
    slot.begun = slot.begun || r.kind == Record::Kind::Begin;
    slot.failed = slot.failed || r.kind == Record::Kind::Failed;
    if (r.kind == Record::Kind::Done) {
      slot.done = true;
      slot.matched = r.digest == result_digest(key_, r.id, expected_result(r.id));
    }
  }

  // The first rank-case that did not come back right, as a sentence; "" if none.
  std::string first_gap() const {
    for (const std::string& stage : stages_)
      for (int P = 1; P <= kMaxWorld; ++P)
        for (std::size_t k = 0; k < cases(stage, P).size(); ++k)
          for (int r = 0; r < P; ++r) {
            const CaseId id{stage, P, static_cast<int>(k) + 1, r};
            const auto slot = slots_.find(id);
            if (slot != slots_.end() && slot->second.matched) continue;
            return where(id) + ": rank " + std::to_string(r) + " " + what_became(id);
          }
    return "";
  }
  bool complete() const { return first_gap().empty(); }

  // What was running when no report came for `limit`.
  std::string stalled(std::chrono::seconds limit) const {
    const std::string within = " within " + std::to_string(limit.count()) + " s";
    if (phase_ == "explaining")
      return "explaining the failure above runs your function again in the simulator, and it "
             "did not return" + within + ": a loop that never ends, or a receive nobody answers?";
    if (stage_.empty()) return "the exercise's program did not start its check" + within;
    for (std::size_t k = 0; k < cases(stage_, world_).size(); ++k) {
      std::vector<int> inside;
      for (int r = 0; r < world_; ++r) {
        const auto slot = slots_.find({stage_, world_, static_cast<int>(k) + 1, r});
        if (slot != slots_.end() && slot->second.begun && !slot->second.done &&
            !slot->second.failed)
          inside.push_back(r);
      }
      if (inside.empty()) continue;
      return where({stage_, world_, static_cast<int>(k) + 1, 0}) + " did not return" + within +
             ": a loop that never ends, or a receive nobody answers?\n  rank" +
             (inside.size() == 1 ? " " : "s ") + join(inside) + (inside.size() == 1 ? " was" : " were") +
             " still in your function";
    }
    return "the world of " + std::to_string(world_) + " ranks on " + stage_ +
           " did not start its cases" + within;
  }

 private:
  struct Slot {
    bool begun = false, failed = false, done = false, matched = false;
  };

  const std::vector<Case>& cases(const std::string& stage, int P) const {
    const bool large = stage != kSimulatorStage;
    auto& list = case_lists_[{large, P}];
    if (list.empty()) list = cases_for(exercise_, P, large);
    return list;
  }
  bool expected(const CaseId& id) const {
    return std::find(stages_.begin(), stages_.end(), id.stage) != stages_.end() && id.ranks >= 1 &&
           id.ranks <= kMaxWorld && id.case_number >= 1 &&
           static_cast<std::size_t>(id.case_number) <= cases(id.stage, id.ranks).size() &&
           id.rank >= 0 && id.rank < id.ranks;
  }
  const Case& case_of(const CaseId& id) const {
    return cases(id.stage, id.ranks)[static_cast<std::size_t>(id.case_number - 1)];
  }
  // The simulator's list is the backends' without the last case: one cache.
  const std::vector<std::byte>& expected_result(const CaseId& id) const {
    auto& bytes = results_[{id.ranks, id.case_number, id.rank}];
    if (!bytes) bytes = expected_bytes(exercise_, case_of(id), id.rank);
    return *bytes;
  }
  std::string where(const CaseId& id) const {
    return "case " + std::to_string(id.case_number) + " of " +
           std::to_string(cases(id.stage, id.ranks).size()) + " in a world of " +
           std::to_string(id.ranks) + " on " + id.stage + " (" +
           describe(exercise_, case_of(id)) + ")";
  }
  std::string what_became(const CaseId& id) const {
    const auto slot = slots_.find(id);
    if (slot == slots_.end() || !slot->second.begun) return "never started it";
    if (slot->second.done) return "returned with buffers that are not the closed form's";
    if (slot->second.failed) return "failed in it";
    return "started it and never returned from your function";
  }

  const Exercise& exercise_;
  std::vector<std::string> stages_;
  RunKey key_;
  std::map<CaseId, Slot> slots_;
  std::string stage_, phase_;
  int world_ = 0;
  mutable std::map<std::pair<bool, int>, std::vector<Case>> case_lists_;
  mutable std::map<std::tuple<int, int, int>, std::optional<std::vector<std::byte>>> results_;
};

// The socket the program reports on: ours, and the end it inherits.
class Channel {
 public:
  explicit Channel(const RunKey& key) {
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds_) != 0)
      throw std::runtime_error(std::string("cannot make the check's report socket: ") +
                               std::strerror(errno));
    ::send(fds_[0], key.data(), key.size(), MSG_NOSIGNAL);  // waits there for the program
  }
  ~Channel() {
    for (int fd : fds_)
      if (fd >= 0) ::close(fd);
  }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  int ours() const { return fds_[0]; }
  int theirs() const { return fds_[1]; }
  void close_theirs() {
    ::close(fds_[1]);
    fds_[1] = -1;
  }
  // The records that have arrived; junk is dropped.
  std::vector<Record> take() {
    std::vector<Record> records;
    char line[512];
    ssize_t n;
    while ((n = ::recv(fds_[0], line, sizeof line, MSG_DONTWAIT)) > 0)
      if (auto record = parse_record(std::string_view(line, static_cast<std::size_t>(n))))
        records.push_back(std::move(*record));
    return records;
  }

 private:
  int fds_[2] = {-1, -1};
};

RunKey fresh_key() {
  const store::Nonce nonce = store::fresh_nonce();
  RunKey key;
  std::copy(nonce.begin(), nonce.end(), key.begin());
  return key;
}

std::vector<std::string> stages_of(const SuperviseOptions& options) {
  if (!options.stages.empty()) return options.stages;
  std::vector<std::string> stages{kSimulatorStage};
  for (const std::string& backend : check_backends()) stages.push_back(backend);
  return stages;
}

std::vector<std::string> check_command(const std::vector<std::string>& program,
                                       const std::vector<std::string>& stages,
                                       const SuperviseOptions& options, int report_fd) {
  std::string list;
  for (const std::string& stage : stages) list += (list.empty() ? "" : ",") + stage;
  std::vector<std::string> argv = program;
  argv.insert(argv.end(), {"check", "--stage", list, "--timeout-ms",
                           std::to_string(options.wait_timeout.count()), "--report-fd",
                           std::to_string(report_fd)});
  return argv;
}

// Why the program's end left cases missing, for the learner.
std::string why_it_ended(const ProgramResult& result, const SuperviseOptions& options) {
  if (result.out_of_memory)
    return "The exercise's program used more than " +
           std::to_string(options.memory_bytes >> 20) +
           " MiB and was stopped (ringlab exercise check --memory-mb sets the cap): does "
           "something allocate far more than a case's buffers?";
  if (result.signal_number != 0)
    return "The exercise's program " + result.describe() +
           ": a crash in your function? An index past the end of a buffer (a chunk's offset "
           "and count), or a scratch buffer used after it was freed.";
  if (result.exit_status == 0)
    return "The exercise's program exited with status 0 all the same: something in your "
           "function ended it early (std::exit, _exit, quick_exit, or an atexit handler). Your "
           "function must return to its caller: a case counts only once every rank's call has "
           "returned with the right values.";
  return "The exercise's program " + result.describe() + " (above).";
}

// The checker's own word once the program has ended by itself.
std::string verdict_note(const Ledger& ledger, const ProgramResult& result,
                         const SuperviseOptions& options) {
  const std::string gap = ledger.first_gap();
  if (gap.empty())
    return result.ok() ? ""
                       : "FAILED: every case passed, but then the exercise's program " +
                             result.describe() +
                             ": an atexit handler or a static object of yours?\n";
  const bool explained = result.exit_status == 1 && !result.signal_number &&
                         result.output.find("FAILED on ") != std::string::npos;
  if (explained) return "";
  return "FAILED: the check did not see every case come back right: " + gap + ".\n  " +
         why_it_ended(result, options) + "\n";
}

}  // namespace

std::chrono::seconds case_limit(const SuperviseOptions& options) {
  const auto wait = std::chrono::duration_cast<std::chrono::seconds>(options.wait_timeout);
  return std::max(options.case_limit, wait + std::chrono::seconds(1));
}

CheckRun run_check(const Exercise& exercise, const std::vector<std::string>& program,
                   const SuperviseOptions& options) {
  const std::vector<std::string> stages = stages_of(options);
  const RunKey key = fresh_key();
  Channel channel(key);
  Interrupts interrupts;
  Program running(check_command(program, stages, options, channel.theirs()),
                  {options.folder, options.memory_bytes, channel.theirs()});
  channel.close_theirs();
  Ledger ledger(exercise, stages, key);
  CheckRun run;
  std::string printed;  // the program's output so far
  const auto say = [&](std::string_view text) {
    run.output += text;
    if (options.print && !text.empty()) options.print(text);
  };
  const auto limit = case_limit(options);
  auto deadline = Clock::now() + limit;
  bool stalled = false;
  while (!running.exited()) {
    pollfd p[3] = {{interrupts.read_end(), POLLIN, 0}, {channel.ours(), POLLIN, 0},
                   {running.output_fd(), POLLIN, 0}};
    ::poll(p, running.output_fd() >= 0 ? 3 : 2, 100);
    const std::size_t before = printed.size();
    running.read_output(printed);
    say(std::string_view(printed).substr(before));
    for (const Record& record : channel.take()) {
      ledger.take(record);
      deadline = Clock::now() + limit;
    }
    stalled = Clock::now() >= deadline;
    if (interrupts.received() || stalled) {
      running.stop();
      break;
    }
  }
  ProgramResult result = running.finish();
  say(result.output);
  result.output = printed + result.output;
  for (const Record& record : channel.take()) ledger.take(record);
  run.interrupted = interrupts.received();
  if (run.interrupted) {
    say(std::string("\ninterrupted (") + ::strsignal(run.interrupted) +
        "): the check and everything it started were stopped\n");
    return run;
  }
  if (stalled) {
    say("FAILED: " + ledger.stalled(limit) + "\n  (a case may take " +
        std::to_string(limit.count()) + " s: ringlab exercise check --case-seconds S allows " +
        "more)\n");
    return run;
  }
  say(verdict_note(ledger, result, options));
  run.passed = ledger.complete() && result.ok();
  return run;
}

}  // namespace ringlab::exercises
