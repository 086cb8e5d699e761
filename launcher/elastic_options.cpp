#include "launcher/elastic_options.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "launcher/capacity.hpp"
#include "launcher/token_file.hpp"
#include "launcher/token_maker.hpp"

namespace ringlab::launch {

namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

std::optional<int> parse_int(const std::string& text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

bool parse_bool(const std::string& option, const std::string& value) {
  if (value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  throw std::invalid_argument(option + " '" + value + "': give true or false");
}

}  // namespace

NodeRange parse_nnodes(const std::string& text) {
  const std::vector<std::string> parts = split(text, ':');
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("--nnodes " + text + ": " + why +
                                 "; give a number of nodes (--nnodes 2) or a range MIN:MAX "
                                 "(--nnodes 1:3)");
  };
  if (parts.size() > 2) throw bad("more than one ':'");
  const std::optional<int> min = parse_int(parts.front());
  const std::optional<int> max = parse_int(parts.back());
  if (!min || !max) throw bad("not a whole number");
  if (*min < 1) throw bad("the minimum must be at least 1");
  if (*min > *max)
    throw std::invalid_argument("--nnodes " + text + ": the minimum (" + std::to_string(*min) +
                                ") is above the maximum (" + std::to_string(*max) +
                                "); write MIN:MAX with MIN <= MAX, e.g. --nnodes 1:3");
  return {*min, *max};
}

Endpoint parse_endpoint(const std::string& text, int default_port) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("--rdzv-endpoint '" + text + "': " + why +
                                 "; write HOST:PORT, the address of a node every node can reach "
                                 "(e.g. 192.0.2.1:29400)");
  };
  Endpoint endpoint;
  std::string port_text;
  if (!text.empty() && text.front() == '[') {  // [IPv6]:PORT
    const std::size_t close = text.find(']');
    if (close == std::string::npos) throw bad("no ']' after the IPv6 address");
    endpoint.host = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') throw bad("expected ':' after ']'");
      port_text = text.substr(close + 2);
    }
  } else {
    const std::size_t colon = text.rfind(':');
    endpoint.host = text.substr(0, colon);
    if (colon != std::string::npos) port_text = text.substr(colon + 1);
    if (endpoint.host.find(':') != std::string::npos)
      throw bad("an IPv6 address needs brackets, [ADDRESS]:PORT");
  }
  if (endpoint.host.empty()) throw bad("no host");
  if (port_text.empty() && text.find(':') == std::string::npos) {
    endpoint.port = default_port;
    return endpoint;
  }
  const std::optional<int> port = parse_int(port_text);
  if (!port || *port < 1 || *port > 65535) throw bad("the port must be a number from 1 to 65535");
  endpoint.port = *port;
  return endpoint;
}

Milliseconds parse_seconds(const std::string& option, const std::string& text) {
  double seconds = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (error != std::errc() || end != text.data() + text.size() || text.empty() ||
      !std::isfinite(seconds) || seconds <= 0 || seconds > 86400.0 * 365)
    throw std::invalid_argument(option + " '" + text +
                                "': give a positive number of seconds (e.g. 0.5 or 30)");
  return Milliseconds(std::max<long long>(1, std::llround(seconds * 1000)));
}

RendezvousConfig parse_rendezvous_conf(const std::string& text) {
  RendezvousConfig config;
  if (text.empty()) return config;
  static constexpr const char* kKnown =
      "join_timeout, last_call_timeout, close_timeout, read_timeout (seconds), "
      "keep_alive_interval (seconds), keep_alive_max_attempt, is_host (true/false), "
      "token_file (a path), open (true/false)";
  for (const std::string& item : split(text, ',')) {
    const std::size_t equals = item.find('=');
    if (equals == std::string::npos)
      throw std::invalid_argument("--rdzv-conf '" + item + "': write key=value (keys: " + kKnown +
                                  ")");
    const std::string key = item.substr(0, equals), value = item.substr(equals + 1);
    const std::string option = "--rdzv-conf " + key;
    if (key == "join_timeout")
      config.join_timeout = parse_seconds(option, value);
    else if (key == "last_call_timeout")
      config.last_call_timeout = parse_seconds(option, value);
    else if (key == "close_timeout")
      config.close_timeout = parse_seconds(option, value);
    else if (key == "read_timeout")
      config.read_timeout = parse_seconds(option, value);
    else if (key == "keep_alive_interval")
      config.keep_alive_interval = parse_seconds(option, value);
    else if (key == "keep_alive_max_attempt") {
      const std::optional<int> attempts = parse_int(value);
      if (!attempts || *attempts < 1 || *attempts > 1000)
        throw std::invalid_argument(option + " '" + value +
                                    "': give a whole number from 1 to 1000");
      config.keep_alive_max_attempt = *attempts;
    } else if (key == "is_host") {
      config.is_host = parse_bool(option, value);
    } else if (key == "open") {
      config.open = parse_bool(option, value);
    } else if (key == "token_file") {
      if (value.empty()) throw std::invalid_argument(option + ": give the path of a file");
      config.token_file = value;
    } else {
      throw std::invalid_argument("--rdzv-conf: unknown key '" + key + "' (keys: " + kKnown + ")");
    }
  }
  return config;
}

StdStreams parse_std_streams(const std::string& option, const std::string& text) {
  const auto streams_of = [&](const std::string& value) {
    const std::optional<int> streams = parse_int(value);
    if (!streams || *streams < 0 || *streams > 3)
      throw std::invalid_argument(option + " '" + text +
                                  "': streams are 0 (none), 1 (stdout), 2 (stderr) or 3 (both); "
                                  "write 3 for every rank or 0:1,1:2 per local rank");
    return *streams;
  };
  StdStreams result;
  if (text.find(':') == std::string::npos) {
    result.all = streams_of(text);
    return result;
  }
  for (const std::string& item : split(text, ',')) {
    const std::size_t colon = item.find(':');
    const std::optional<int> rank = parse_int(item.substr(0, colon));
    if (colon == std::string::npos || !rank || *rank < 0)
      throw std::invalid_argument(option + " '" + text +
                                  "': write LOCAL_RANK:STREAMS pairs, e.g. 0:1,1:2");
    result.per_rank.emplace_back(*rank, streams_of(item.substr(colon + 1)));
  }
  return result;
}

void validate(const ElasticOptions& o) {
  if (o.workers.program.empty())
    throw std::invalid_argument(
        "no program to run: put it after --, e.g. ringlab run --nnodes 1:2 --nproc-per-node 2 "
        "--rdzv-endpoint HOST:PORT -- PROGRAM");
  if (o.workers.nproc_per_node < 1)
    throw std::invalid_argument("--nproc-per-node is " + std::to_string(o.workers.nproc_per_node) +
                                ": it must be at least 1");
  if (o.min_nodes < 1 || o.min_nodes > o.max_nodes)
    throw std::invalid_argument("--nnodes " + std::to_string(o.min_nodes) + ":" +
                                std::to_string(o.max_nodes) + ": need 1 <= MIN <= MAX");
  if (o.max_restarts < 0)
    throw std::invalid_argument("--max-restarts is " + std::to_string(o.max_restarts) +
                                ": it must be 0 or more");
  if (o.run_id.empty() || o.run_id.size() > 128 ||
      o.run_id.find_first_of("/ \t\n") != std::string::npos)
    throw std::invalid_argument("--rdzv-id '" + o.run_id +
                                "': give a name of up to 128 characters without '/' or spaces");
  if (o.endpoint_port < 1 || o.endpoint_port > 65535)
    throw std::invalid_argument("--rdzv-endpoint port " + std::to_string(o.endpoint_port) +
                                ": use 1 to 65535");
  if (o.master_port < 0 || o.master_port > 65535)
    throw std::invalid_argument("--master-port is " + std::to_string(o.master_port) +
                                ": use a TCP port, 1 to 65535 (0: pick a free one)");
  check_rank_capacity(o.workers.nproc_per_node, !o.log_dir.empty());
}

std::string elastic_job_token(const ElasticOptions& o, const char* from_environment) {
  const RendezvousConfig& config = o.rendezvous;
  const std::string given = from_environment ? from_environment : "";
  const std::string from_file = config.token_file.empty() ? "" : read_token_file(config.token_file);
  if (!given.empty() && !from_file.empty() && given != from_file)
    throw std::invalid_argument(
        std::string(kJobTokenVariable) + " and --rdzv-conf token_file=" + config.token_file +
        " hold different secrets: give one of them (the same on every node)");
  const std::string token = from_file.empty() ? given : from_file;
  if (config.open) {
    if (!token.empty())
      throw std::invalid_argument(
          "--rdzv-conf open=true, but this node was given the job's secret (" +
          std::string(from_file.empty() ? kJobTokenVariable : "token_file") +
          "): drop open=true to keep the job private, or give no secret to run it open");
    return "";
  }
  if (!token.empty()) return token;
  if (o.max_nodes == 1) return fresh_job_token();  // no other node needs to know it
  throw std::invalid_argument(
      "--nnodes " + std::to_string(o.min_nodes) + ":" + std::to_string(o.max_nodes) +
      " lets other nodes join, and they must share a secret that proves they belong to this job "
      "(without one, anyone who reaches " + o.endpoint_host + ":" +
      std::to_string(o.endpoint_port) +
      " could join it, close it or change its state): export the same " + kJobTokenVariable +
      "=<secret> on every node (e.g. $(openssl rand -hex 32)), or give every node --rdzv-conf "
      "token_file=PATH, a file only you can read that holds it; --rdzv-conf open=true runs the "
      "job open to anyone instead");
}

}  // namespace ringlab::launch
