#include "launcher/agent_store.hpp"

#include <arpa/inet.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "launcher/launcher.hpp"
#include "launcher/rendezvous_state.hpp"
#include "store/store.hpp"

namespace ringlab::launch {

namespace {

// "could not reach ... (last error: Connection refused)" -> "Connection refused"
std::string last_error_of(const std::string& what) {
  const std::string marker = "(last error: ";
  const std::size_t at = what.find(marker);
  if (at == std::string::npos) return what;
  std::string rest = what.substr(at + marker.size());
  if (!rest.empty() && rest.back() == ')') rest.pop_back();
  return rest;
}

bool is_loopback(const std::string& address) {
  in_addr v4{};
  if (::inet_pton(AF_INET, address.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, address.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return address == "localhost";
}

}  // namespace

void require_token_beyond_loopback(const ElasticOptions& options, const std::string& address,
                                   const std::string& what) {
  if (!options.job_token.empty() || is_loopback(address)) return;
  throw std::invalid_argument(
      what + " " + address +
      ", which other machines can reach, and this job is open (--rdzv-conf open=true): its "
      "workers refuse to listen beyond loopback without a token; give every node the same secret "
      "instead (export RINGLAB_JOB_TOKEN=<secret>, e.g. $(openssl rand -hex 32), or --rdzv-conf "
      "token_file=PATH), or keep the job on loopback (127.0.0.1)");
}

AgentStore::AgentStore(const ElasticOptions& options)
    : options_(options), prefix_("ringlab/elastic/" + options.run_id + "/") {}

AgentStore::~AgentStore() {
  client_.reset();  // the client goes before the server it talks to
  server_.reset();
}

std::string AgentStore::endpoint() const {
  return options_.endpoint_host + ":" + std::to_string(options_.endpoint_port);
}

void AgentStore::connect() {
  host_or_join();
  check_job();
}

void AgentStore::host_or_join() {
  const RendezvousConfig& config = options_.rendezvous;
  if (config.is_host.value_or(true)) {
    try {
      server_ = std::make_unique<store::StoreServer>(options_.endpoint_host, options_.endpoint_port,
                                                   std::chrono::seconds(5), store::StoreLimits{},
                                                   options_.job_token);
    } catch (const std::exception& e) {
      if (config.is_host.value_or(false))
        throw std::runtime_error(
            "this node was told to host the rendezvous store (--rdzv-conf "
            "is_host=true) but cannot: " +
            std::string(e.what()));
      // The address is not ours, or another agent on this machine hosts the store.
    }
  }
  if (server_)
    require_token_beyond_loopback(options_, options_.endpoint_host,
                                  "the rendezvous store would be hosted at");
  try {
    client_ = std::make_unique<store::StoreClient>(options_.endpoint_host, options_.endpoint_port,
                                                   config.read_timeout, options_.job_token);
  } catch (const store::WrongStoreError& e) {
    throw std::runtime_error(
        "the rendezvous store at " + endpoint() + " is not this job's: " + e.what() +
        "; give every node the same secret (RINGLAB_JOB_TOKEN, or --rdzv-conf token_file=PATH "
        "with the same content), or use another --rdzv-endpoint for another job");
  } catch (const std::exception& e) {
    throw std::runtime_error(
        "cannot reach the rendezvous store at " + endpoint() + " within " +
        seconds_text(config.read_timeout) + " (" + last_error_of(e.what()) +
        "): start the first node with the same --rdzv-endpoint (the node that owns that address "
        "hosts the store), check the address and port, or wait longer with --rdzv-conf "
        "read_timeout=SECONDS");
  }
}

void AgentStore::check_job() {
  store::StoreClient& client = *client_;
  const std::string run = client.compare_set("ringlab/elastic/run", "", options_.run_id);
  if (run != options_.run_id)
    throw std::runtime_error("the rendezvous store at " + endpoint() + " serves run '" + run +
                             "', but this node was started with --rdzv-id " + options_.run_id +
                             ": give every node the same --rdzv-id (or use another "
                             "--rdzv-endpoint for another job)");
  const nlohmann::json mine = {{"nproc_per_node", options_.workers.nproc_per_node},
                               {"min_nodes", options_.min_nodes},
                               {"max_nodes", options_.max_nodes}};
  const std::string stored = client.compare_set(key("config"), "", mine.dump());
  const nlohmann::json job = nlohmann::json::parse(stored, nullptr, false);
  if (!job.is_object() || !job.contains("nproc_per_node"))
    throw std::runtime_error("the rendezvous store at " + endpoint() +
                             " holds a job description this version of ringlab cannot read");
  if (job["nproc_per_node"] != mine["nproc_per_node"])
    throw std::runtime_error("this node has --nproc-per-node " + mine["nproc_per_node"].dump() +
                             ", but the nodes of run '" + options_.run_id + "' have " +
                             job["nproc_per_node"].dump() +
                             ": give every node the same --nproc-per-node");
  if (job["min_nodes"] != mine["min_nodes"] || job["max_nodes"] != mine["max_nodes"])
    throw std::runtime_error("this node has --nnodes " + mine["min_nodes"].dump() + ":" +
                             mine["max_nodes"].dump() + ", but run '" + options_.run_id +
                             "' was started with --nnodes " + job["min_nodes"].dump() + ":" +
                             job["max_nodes"].dump() + ": give every node the same --nnodes");
  client.compare_set(key("state"), "", to_json(RendezvousState{}));
}

}  // namespace ringlab::launch
