// The options of an elastic `ringlab run` (torchrun's: --nnodes MIN:MAX,
// --max-restarts, --rdzv-id, --rdzv-backend c10d, --rdzv-endpoint HOST:PORT,
// --rdzv-conf, --monitor-interval, --standalone, --log-dir, --redirects,
// --tee) and the parsers of their values. Every parser throws
// std::invalid_argument saying what was wrong and what to write instead.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "launcher/launcher.hpp"

namespace ringlab::launch {

// torchrun's --rdzv-conf keys (seconds), and ringlab's heartbeat settings,
// which torch fixes at 5 s and 3 attempts.
struct RendezvousConfig {
  Milliseconds join_timeout{600'000};       // join_timeout: a round must form within this
  Milliseconds last_call_timeout{30'000};   // last_call_timeout: wait for more once MIN are in
  Milliseconds close_timeout{30'000};       // close_timeout: the host waits this long for the
                                            // others to read the end of the job
  Milliseconds read_timeout{60'000};        // read_timeout: reaching the store, and each request
  Milliseconds keep_alive_interval{5'000};  // keep_alive_interval: one heartbeat per interval
  int keep_alive_max_attempt = 3;  // keep_alive_max_attempt: missed beats before a node is dead
  // is_host: whether this node hosts the store; unset: the node that can bind
  // the endpoint does.
  std::optional<bool> is_host;
  // token_file: a file holding the job's secret (the same on every node),
  // instead of RINGLAB_JOB_TOKEN.
  std::string token_file;
  // open: a job of several nodes without a secret, open to anyone who
  // reaches the endpoint (refused unless asked for).
  bool open = false;

  // How long a node may go without a heartbeat before it is taken for dead.
  Milliseconds lapse() const { return keep_alive_interval * keep_alive_max_attempt; }
};

struct ElasticOptions {
  // The ranks of this node, as for a static launch: nproc_per_node, program,
  // stop_after and kill_after (the grace between SIGTERM and SIGKILL when a
  // group is stopped), tee_prefix, the output fds, rank_timeout, name.
  // (nnodes, node_rank, master_addr and master_port are set for each round.)
  LaunchOptions workers;
  int min_nodes = 1;
  int max_nodes = 1;
  int max_restarts = 0;
  std::string run_id = "none";
  std::string endpoint_host = "127.0.0.1";
  int endpoint_port = 29400;  // torchrun's default
  // When endpoint_port was picked on this machine (--standalone): the port,
  // held until the agent ends so that no job started beside this one takes
  // it before the rendezvous store binds it.
  std::shared_ptr<PortReservation> endpoint_reservation;
  RendezvousConfig rendezvous;
  // The job's secret (elastic_job_token): the agents' store serves only
  // those who prove they know it, and every worker is given it. Empty: an
  // open job.
  std::string job_token;
  Milliseconds monitor_interval{1000};
  // Every rank's stdout and stderr also go to <log_dir>/<run id>_<random>/
  // attempt_<restart>/<local rank>/{stdout,stderr}.log; empty: no files.
  std::string log_dir;
  // A Chrome trace of this agent's rounds (and, on the node hosting the
  // store, of every agent's), written when the agent ends; empty: none.
  std::string trace_output;
  // After this node's workers succeed: how long it waits for the other
  // nodes' workers to finish too.
  Milliseconds exit_barrier_timeout{300'000};
  // The master address/port group rank 0 gives the workers: empty/0 pick
  // this node's address and a free port, fresh for each round.
  std::string master_addr;
  int master_port = 0;
};

struct NodeRange {
  int min = 1, max = 1;
};
// "3" or "1:3" (--nnodes).
NodeRange parse_nnodes(const std::string& text);

struct Endpoint {
  std::string host;
  int port = 0;
};
// "HOST:PORT", "HOST" (default_port), "[::1]:PORT" (--rdzv-endpoint).
Endpoint parse_endpoint(const std::string& text, int default_port);

// "key=value,key=value" (--rdzv-conf); times in seconds ("2", "0.5").
RendezvousConfig parse_rendezvous_conf(const std::string& text);

// "3", "0:1,1:2" (--redirects, --tee); option names the flag in errors.
StdStreams parse_std_streams(const std::string& option, const std::string& text);

// "0.5" seconds, "2" (--monitor-interval and the --rdzv-conf times).
Milliseconds parse_seconds(const std::string& option, const std::string& text);

// Checks what can be checked before anything starts.
void validate(const ElasticOptions& options);

// The job's secret, which every agent proves it knows to the agents' store
// and gives its workers: the file of --rdzv-conf token_file, else
// from_environment (RINGLAB_JOB_TOKEN; nullptr: unset), else a fresh one
// for a job of one node (max_nodes 1: no other node needs to know it). ""
// for an open job (--rdzv-conf open=true). Throws std::invalid_argument for
// a job of several nodes without a secret (what to give instead), an open
// job given one, two secrets that differ, or a token file read_token_file
// (token_file.hpp) refuses.
std::string elastic_job_token(const ElasticOptions& options, const char* from_environment);

}  // namespace ringlab::launch
