#include "launcher/agent_trace.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "launcher/line_stream.hpp"
#include "ops/atomic_file.hpp"

namespace ringlab::launch {

void AgentLog::line(const std::string& text) const {
  const std::string prefix =
      node_ > 0 ? name_ + " [node " + std::to_string(node_) + "]: " : name_ + ": ";
  write_all(fd_, prefix + text + "\n");
}

std::int64_t AgentTrace::now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void AgentTrace::begin(const std::string& name, Args args) {
  end();
  events_.push_back({name, now_us(), std::nullopt, std::move(args)});
  open_ = events_.size() - 1;
}

void AgentTrace::end(const Args& args) {
  if (!open_) return;
  Event& event = events_[*open_];
  event.end_us = now_us();
  event.args.insert(event.args.end(), args.begin(), args.end());
  open_.reset();
}

void AgentTrace::instant(const std::string& name, Args args) {
  events_.push_back({name, now_us(), std::nullopt, std::move(args)});
}

std::string AgentTrace::lane_json(int node, const std::string& label) const {
  nlohmann::json lane = nlohmann::json::array();
  lane.push_back({{"name", "process_name"},
                  {"ph", "M"},
                  {"pid", node},
                  {"tid", 0},
                  {"args", {{"name", label}}}});
  lane.push_back({{"name", "process_sort_index"},
                  {"ph", "M"},
                  {"pid", node},
                  {"tid", 0},
                  {"args", {{"sort_index", node}}}});
  const std::int64_t now = now_us();
  for (std::size_t i = 0; i < events_.size(); ++i) {
    const Event& e = events_[i];
    nlohmann::json args = nlohmann::json::object();
    for (const auto& [key, value] : e.args) args[key] = value;
    const bool slice = e.end_us.has_value() || open_ == i;
    nlohmann::json event = {
        {"name", e.name}, {"pid", node}, {"tid", 0}, {"ts", e.start_us}, {"args", args}};
    if (slice) {
      event["ph"] = "X";
      event["dur"] = (e.end_us ? *e.end_us : now) - e.start_us;
    } else {
      event["ph"] = "i";
      event["s"] = "p";
    }
    lane.push_back(std::move(event));
  }
  return lane.dump();
}

void AgentTrace::write_file(const std::string& path, const std::vector<std::string>& lanes) {
  nlohmann::json events = nlohmann::json::array();
  for (const std::string& lane : lanes) {
    const nlohmann::json parsed = nlohmann::json::parse(lane, nullptr, false);
    if (!parsed.is_array()) continue;
    for (const auto& event : parsed) events.push_back(event);
  }
  const std::string text =
      nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump() + "\n";
  write_file_atomically(path, "the trace", text);
}

}  // namespace ringlab::launch
