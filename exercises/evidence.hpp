// The evidence a check leaves, so that its verdict never rests on the exit
// status of a program that runs the learner's code. `ringlab exercise check`
// (the checker, supervise.hpp) draws a fresh random key for each run and
// hands it to the exercise's program on a socket before any of the
// learner's code runs. The program reports on that socket as it goes: each
// world, each case's start on each rank, and, once a rank's call has
// returned, a digest of what its buffers hold, HMAC-SHA256 keyed with the run's
// key over the case's name and its checked elements. The checker computes
// the digest every rank should send from the closed forms (cases.hpp) on its
// side, and passes an exercise only when every case of every stage came back
// with the digest it expects.
//
// So printing "passed", exiting with status 0 (exit, _exit, an atexit
// handler), or returning early leaves cases unreported or wrong, and fails.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "exercises/cases.hpp"

namespace ringlab::exercises {

using RunKey = std::array<std::byte, 16>;

// One rank's part of one case of one stage (case_number counts from 1 within
// its world, as cases_for lists them).
struct CaseId {
  std::string stage;
  int ranks = 1;
  int case_number = 1;
  int rank = 0;
  bool operator<(const CaseId& other) const;
  bool operator==(const CaseId& other) const = default;
};

// The bytes a rank's result is digested as: every checked element, in buffer
// order, written in the case's dtype (the expected value where held() is the
// same by same_value, else held()), then one byte per rank a barrier
// returned without hearing from.
std::vector<std::byte> result_bytes(const Exercise& exercise, const Case& c, int rank,
                                    const std::function<double(int, std::size_t)>& held,
                                    const std::vector<int>& not_heard);
// What rank `rank` must report: result_bytes of the closed form.
std::vector<std::byte> expected_bytes(const Exercise& exercise, const Case& c, int rank);

// 32 hex digits: HMAC-SHA256(key, "stage P case rank" ‖ result), cut to 16 bytes.
std::string result_digest(const RunKey& key, const CaseId& id, std::span<const std::byte> result);

// One line of the report, as the program sends it ("begin tcp 4 3 2").
struct Record {
  enum class Kind { World, Begin, Done, Failed, Phase } kind = Kind::Phase;
  CaseId id;           // World: stage and ranks; Phase: stage holds the phase's name
  std::string digest;  // Done
};
std::string format_record(const Record& record);
// nullopt for a line that is no record.
std::optional<Record> parse_record(std::string_view line);

// The program's side: the socket it reports on, and the run's key.
class Reporter {
 public:
  // Reads the key the checker sends first on `fd` (waiting at most 10 s for
  // it); throws std::runtime_error when none comes.
  explicit Reporter(int fd);
  void send(const Record& record) const;
  void done(const CaseId& id, std::span<const std::byte> result) const;

 private:
  int fd_;
  RunKey key_{};
};

}  // namespace ringlab::exercises
