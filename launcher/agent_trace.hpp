// What an elastic agent says and records about its rounds.
//
// AgentLog: one line per event on the launcher's stderr, "ringlab run [node
// 2]: round 1: 2 nodes, world size 4, ...", written with one write() so it
// never mixes with the workers' lines.
//
// AgentTrace: the same events as a Chrome trace lane (Perfetto,
// chrome://tracing): slices for the rendezvous, the rounds and the stops,
// instants for the restarts with their reason. Times are wall-clock
// microseconds, so that the lanes of agents on different machines line up.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ringlab::launch {

class AgentLog {
 public:
  AgentLog(std::string name, int fd) : name_(std::move(name)), fd_(fd) {}
  void set_node(int id) { node_ = id; }
  void line(const std::string& text) const;

 private:
  std::string name_;  // "ringlab run"
  int fd_;
  int node_ = 0;
};

class AgentTrace {
 public:
  using Args = std::vector<std::pair<std::string, std::string>>;

  // Opens a slice (closing the one open, if any).
  void begin(const std::string& name, Args args = {});
  // Closes the open slice, adding args to it.
  void end(const Args& args = {});
  void instant(const std::string& name, Args args = {});

  // This agent's lane as a JSON array of trace events, under the name label.
  std::string lane_json(int node, const std::string& label) const;

  // Writes a trace file holding the given lanes (lane_json values; a lane
  // that is not valid JSON is skipped), atomically. Throws std::runtime_error
  // naming the path.
  static void write_file(const std::string& path, const std::vector<std::string>& lanes);

 private:
  struct Event {
    std::string name;
    std::int64_t start_us = 0;
    std::optional<std::int64_t> end_us;  // nothing: an instant
    Args args;
  };
  static std::int64_t now_us();
  std::vector<Event> events_;
  std::optional<std::size_t> open_;  // index of the open slice
};

}  // namespace ringlab::launch
