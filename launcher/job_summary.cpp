#include "launcher/job_summary.hpp"

#include <signal.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

namespace ringlab::launch {

namespace {

std::string local_time_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm parts{};
  ::localtime_r(&now, &parts);
  char text[32] = {};
  std::strftime(text, sizeof text, "%Y-%m-%d_%H:%M:%S", &parts);
  return text;
}

nlohmann::json record_json(const FailureRecord& r) {
  return {{"rank", r.rank},
          {"local_rank", r.local_rank},
          {"node", r.node},
          {"host", r.host},
          {"agent_pid", r.agent_pid},
          {"round", r.round},
          {"restart_count", r.restart_count},
          {"pid", r.pid},
          {"exit_status", r.exit_status},
          {"signal_number", r.signal_number},
          {"description", r.description},
          {"error", r.error},
          {"error_file", r.error_file},
          {"time", r.time}};
}

FailureRecord record_from(const nlohmann::json& j) {
  FailureRecord r;
  r.rank = j.at("rank").get<int>();
  r.local_rank = j.at("local_rank").get<int>();
  r.node = j.at("node").get<int>();
  r.host = j.at("host").get<std::string>();
  r.agent_pid = j.at("agent_pid").get<int>();
  r.round = j.at("round").get<long long>();
  r.restart_count = j.at("restart_count").get<int>();
  r.pid = j.at("pid").get<int>();
  r.exit_status = j.at("exit_status").get<int>();
  r.signal_number = j.at("signal_number").get<int>();
  r.description = j.at("description").get<std::string>();
  r.error = j.at("error").get<std::string>();
  r.error_file = j.at("error_file").get<std::string>();
  r.time = j.at("time").get<std::string>();
  return r;
}

}  // namespace

FailureRecord failure_record(const RankExit& exit, int nproc_per_node) {
  FailureRecord r;
  r.rank = exit.rank;
  r.local_rank = nproc_per_node > 0 ? exit.rank % nproc_per_node : 0;
  r.pid = exit.pid;
  r.exit_status = exit.exit_status;
  r.signal_number = exit.signal_number;
  r.description = exit.describe();
  r.error = exit.error;
  r.time = local_time_now();
  return r;
}

std::string to_json(const FailureRecord& record) { return record_json(record).dump(); }

std::optional<FailureRecord> failure_from_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  try {
    return record_from(j);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

std::string to_json(const JobOutcome& outcome) {
  nlohmann::json j = {{"reason", outcome.reason}, {"exit_code", outcome.exit_code}};
  if (outcome.first_failure) j["first_failure"] = record_json(*outcome.first_failure);
  return j.dump();
}

std::optional<JobOutcome> outcome_from_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  try {
    JobOutcome outcome;
    outcome.reason = j.at("reason").get<std::string>();
    outcome.exit_code = j.at("exit_code").get<int>();
    if (j.contains("first_failure")) outcome.first_failure = record_from(j.at("first_failure"));
    return outcome;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

std::string format_summary(const JobOutcome& outcome, const std::string& program) {
  const std::string rule(60, '='), section(60, '-');
  std::string text = rule + "\n" + program + " FAILED\n" + section + "\n" + outcome.reason + "\n";
  if (const auto& f = outcome.first_failure) {
    std::string exitcode;
    if (f->signal_number != 0) {
      const char* name = ::strsignal(f->signal_number);
      exitcode = "-" + std::to_string(f->signal_number) + " (signal " +
                 std::to_string(f->signal_number) + (name ? ", " + std::string(name) : "") +
                 "; pid: " + std::to_string(f->pid) + ")";
    } else {
      exitcode = std::to_string(f->exit_status) + " (pid: " + std::to_string(f->pid) + ")";
    }
    text += "Root cause (first observed failure):\n";
    text += "  time      : " + f->time + "\n";
    text += "  host      : " + f->host + " (node " + std::to_string(f->node) + ", agent pid " +
            std::to_string(f->agent_pid) + ")\n";
    text += "  rank      : " + std::to_string(f->rank) +
            " (local_rank: " + std::to_string(f->local_rank) + ", round " +
            std::to_string(f->round) + ", restart " + std::to_string(f->restart_count) + ")\n";
    text += "  exitcode  : " + exitcode + "\n";
    text += "  cause     : rank " + std::to_string(f->rank) + " " + f->description + "\n";
    text += "  error_file: " + (f->error_file.empty() ? "<N/A>" : f->error_file) + "\n";
    text += "  error     : " + (f->error.empty() ? "<it printed nothing>" : f->error) + "\n";
  }
  return text + rule + "\n";
}

}  // namespace ringlab::launch
