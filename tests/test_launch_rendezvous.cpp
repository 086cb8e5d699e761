// The elastic launcher's pure parts: the rendezvous state's transitions
// (torch's dynamic rendezvous rules, written out by hand as sequences), the
// parsers of torchrun's option values, and the end-of-job report.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "launcher/elastic_options.hpp"
#include "launcher/job_summary.hpp"
#include "launcher/rendezvous_state.hpp"

namespace {

using namespace ringlab::launch;

NodeDesc node(int id) {
  return {id, "host" + std::to_string(id), 100 + id, "10.0.0." + std::to_string(id), 2};
}

// One node takes the action the rules give it (as the agent's loop does).
JoinAction step(RendezvousState& state, int id, int min, int max, bool last_call_over = false) {
  const JoinAction action = next_join_action(state, id, min, max, last_call_over);
  apply_join_action(state, action, node(id), max);
  return action;
}

}  // namespace

TEST_CASE("a round forms once MIN nodes are in and the last call is over, at once with MAX") {
  RendezvousState s;
  CHECK(step(s, 1, 2, 3) == JoinAction::AddToParticipants);
  CHECK(step(s, 1, 2, 3) == JoinAction::Wait);        // 1 of at least 2
  CHECK(step(s, 1, 2, 3, true) == JoinAction::Wait);  // the last call does not count below MIN
  CHECK(step(s, 2, 2, 3) == JoinAction::AddToParticipants);
  CHECK_FALSE(s.complete);
  CHECK(step(s, 2, 2, 3) == JoinAction::Wait);  // last call still running
  CHECK(step(s, 1, 2, 3, true) == JoinAction::MarkComplete);
  CHECK(s.complete);
  CHECK(step(s, 2, 2, 3) == JoinAction::Done);
  CHECK(group_rank_of(s, 1) == 0);
  CHECK(group_rank_of(s, 2) == 1);

  RendezvousState full;
  step(full, 3, 1, 2);
  CHECK_FALSE(full.complete);
  step(full, 1, 1, 2);
  CHECK(full.complete);  // MAX: no last call
  // Group ranks follow node ids, not the order of arrival.
  CHECK(group_rank_of(full, 1) == 0);
  CHECK(group_rank_of(full, 3) == 1);
}

TEST_CASE("a node arriving at a running round waits; the round ends when its nodes leave") {
  RendezvousState s;
  step(s, 1, 1, 3);
  step(s, 1, 1, 3, true);
  REQUIRE(s.complete);
  CHECK(s.round == 0);
  // Node 2 arrives: the round runs, with room: it asks to join.
  CHECK(step(s, 2, 1, 3) == JoinAction::AddToWaitList);
  CHECK(is_waiting(s, 2));
  CHECK(step(s, 2, 1, 3) == JoinAction::Wait);
  // Node 1 sees it, stops its workers and leaves: the next round begins.
  CHECK(remove_node(s, 1));
  CHECK(s.round == 1);
  CHECK_FALSE(s.complete);
  CHECK(step(s, 2, 1, 3) == JoinAction::AddToParticipants);
  CHECK_FALSE(is_waiting(s, 2));
  CHECK(step(s, 1, 1, 3) == JoinAction::AddToParticipants);
  CHECK(step(s, 2, 1, 3, true) == JoinAction::MarkComplete);
  CHECK(s.participants.size() == 2);
  CHECK(group_rank_of(s, 1) == 0);
  CHECK(group_rank_of(s, 2) == 1);
}

TEST_CASE("a full round does not take a waiting node; a closed job takes nobody") {
  RendezvousState s;
  step(s, 1, 1, 1);
  REQUIRE(s.complete);
  CHECK(step(s, 2, 1, 1) == JoinAction::Wait);
  CHECK_FALSE(is_waiting(s, 2));
  s.closed = true;
  CHECK(next_join_action(s, 1, 1, 1, true) == JoinAction::Closed);
  CHECK(next_join_action(s, 2, 1, 1, true) == JoinAction::Closed);
}

TEST_CASE("a dead node is taken out; the last one out of a complete round starts the next") {
  RendezvousState s;
  step(s, 1, 1, 3);
  step(s, 2, 1, 3);
  step(s, 1, 1, 3, true);
  REQUIRE(s.complete);
  CHECK(remove_node(s, 2));
  CHECK(s.complete);  // node 1 still runs it
  CHECK(s.round == 0);
  CHECK_FALSE(remove_node(s, 2));
  CHECK(remove_node(s, 1));
  CHECK(s.round == 1);
  CHECK_FALSE(s.complete);
  // Out of a forming round: no new round.
  step(s, 1, 2, 3);
  CHECK(remove_node(s, 1));
  CHECK(s.round == 1);
}

TEST_CASE("the state goes through JSON unchanged, and a corrupt one is refused") {
  RendezvousState s;
  s.round = 7;
  s.complete = true;
  s.participants = {node(1), node(4)};
  s.wait_list = {node(5)};
  s.last_change = "node 5 (host5, pid 105) wants to join";
  CHECK(state_from_json(to_json(s)) == s);
  s.closed = true;
  s.closed_reason = "the end";
  CHECK(state_from_json(to_json(s)) == s);
  CHECK_THROWS_WITH_AS(state_from_json("{\"round\": 1}"),
                       doctest::Contains("the rendezvous state in the store is corrupt"),
                       std::runtime_error);
  CHECK_THROWS_AS(state_from_json("not json"), std::runtime_error);
}

TEST_CASE("torchrun's option values: --nnodes, --rdzv-endpoint, --rdzv-conf, --redirects") {
  CHECK(parse_nnodes("1:3").min == 1);
  CHECK(parse_nnodes("1:3").max == 3);
  CHECK(parse_nnodes("2").min == 2);
  CHECK(parse_nnodes("2").max == 2);
  CHECK_THROWS_WITH_AS(parse_nnodes("3:1"),
                       "--nnodes 3:1: the minimum (3) is above the maximum (1); write MIN:MAX "
                       "with MIN <= MAX, e.g. --nnodes 1:3",
                       std::invalid_argument);
  for (const char* bad : {"0:2", "a:b", "1:2:3", "", ":3", "-1"})
    CHECK_THROWS_AS(parse_nnodes(bad), std::invalid_argument);

  Endpoint e = parse_endpoint("192.0.0.1:1234", 29400);
  CHECK(e.host == "192.0.0.1");
  CHECK(e.port == 1234);
  e = parse_endpoint("node0", 29400);
  CHECK(e.host == "node0");
  CHECK(e.port == 29400);
  e = parse_endpoint("[::1]:5000", 29400);
  CHECK(e.host == "::1");
  CHECK(e.port == 5000);
  for (const char* bad : {"host:", "host:0", "host:70000", ":1234", "::1:5000", "[::1", "h:x"})
    CHECK_THROWS_WITH_AS(parse_endpoint(bad, 29400), doctest::Contains("write HOST:PORT"),
                         std::invalid_argument);

  const RendezvousConfig c = parse_rendezvous_conf(
      "join_timeout=20,last_call_timeout=0.5,read_timeout=2,keep_alive_interval=0.2,"
      "keep_alive_max_attempt=4,is_host=false,close_timeout=3");
  CHECK(c.join_timeout == std::chrono::seconds(20));
  CHECK(c.last_call_timeout == std::chrono::milliseconds(500));
  CHECK(c.read_timeout == std::chrono::seconds(2));
  CHECK(c.close_timeout == std::chrono::seconds(3));
  CHECK(c.lapse() == std::chrono::milliseconds(800));
  REQUIRE(c.is_host);
  CHECK_FALSE(*c.is_host);
  CHECK(parse_rendezvous_conf("").join_timeout == std::chrono::seconds(600));  // torch's defaults
  CHECK(parse_rendezvous_conf("").last_call_timeout == std::chrono::seconds(30));
  CHECK_THROWS_WITH_AS(parse_rendezvous_conf("timeout=3"),
                       doctest::Contains("unknown key 'timeout' (keys: join_timeout"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_rendezvous_conf("join_timeout=-1"),
                       doctest::Contains("give a positive number of seconds"),
                       std::invalid_argument);
  CHECK_THROWS_AS(parse_rendezvous_conf("join_timeout"), std::invalid_argument);

  CHECK(parse_std_streams("--redirects", "3").of(5) == 3);
  const StdStreams per_rank = parse_std_streams("--redirects", "0:1,1:2");
  CHECK(per_rank.of(0) == StdStreams::kStdout);
  CHECK(per_rank.of(1) == StdStreams::kStderr);
  CHECK(per_rank.of(2) == 0);
  for (const char* bad : {"4", "x", "0:5", "a:1", "0:"})
    CHECK_THROWS_WITH_AS(parse_std_streams("--tee", bad), doctest::Contains("--tee"),
                         std::invalid_argument);
}

TEST_CASE("the end-of-job report names the first failure, torchrun's way") {
  JobOutcome outcome;
  outcome.reason =
      "rank 3 exited with status 3, and all 3 restarts of --max-restarts 3 are used up";
  outcome.exit_code = 3;
  FailureRecord f;
  f.rank = 3;
  f.local_rank = 1;
  f.node = 2;
  f.host = "node-b";
  f.agent_pid = 4711;
  f.round = 4;
  f.restart_count = 3;
  f.pid = 4800;
  f.exit_status = 3;
  f.description = "exited with status 3";
  f.error = "rank 3: failing on request at step 7";
  f.time = "2024-05-01_12:03:04";
  outcome.first_failure = f;
  const std::string expected =
      "============================================================\n"
      "train FAILED\n"
      "------------------------------------------------------------\n"
      "rank 3 exited with status 3, and all 3 restarts of --max-restarts 3 are used up\n"
      "Root cause (first observed failure):\n"
      "  time      : 2024-05-01_12:03:04\n"
      "  host      : node-b (node 2, agent pid 4711)\n"
      "  rank      : 3 (local_rank: 1, round 4, restart 3)\n"
      "  exitcode  : 3 (pid: 4800)\n"
      "  cause     : rank 3 exited with status 3\n"
      "  error_file: <N/A>\n"
      "  error     : rank 3: failing on request at step 7\n"
      "============================================================\n";
  CHECK(format_summary(outcome, "train") == expected);
  // Through the store's JSON and back: the same report.
  const auto back = outcome_from_json(to_json(outcome));
  REQUIRE(back);
  CHECK(format_summary(*back, "train") == expected);

  // A signal shows as torch shows it (-9), and nothing said as such.
  f.exit_status = 0;
  f.signal_number = 9;
  f.error.clear();
  outcome.first_failure = f;
  const std::string text = format_summary(outcome, "train");
  CHECK(text.find("  exitcode  : -9 (signal 9, Killed; pid: 4800)\n") != std::string::npos);
  CHECK(text.find("  error     : <it printed nothing>\n") != std::string::npos);
  CHECK_FALSE(outcome_from_json("{}"));
  CHECK_FALSE(outcome_from_json("garbage"));
}
