#include "transport/tcp/loopback.hpp"

#include <algorithm>
#include <stdexcept>

#include "transport/tcp/socket_util.hpp"

namespace ringlab::tcp {

bool is_loopback(const asio::ip::address& address) {
  if (address.is_loopback()) return true;
  if (!address.is_v6()) return false;
  const auto v6 = address.to_v6();
  return v6.is_v4_mapped() &&
         asio::ip::make_address_v4(asio::ip::v4_mapped, v6).is_loopback();
}

bool HostAddresses::on_loopback() const {
  return resolved() && std::all_of(addresses.begin(), addresses.end(),
                                   [](const auto& address) { return is_loopback(address); });
}

namespace {
std::string joined(const std::vector<asio::ip::address>& addresses, bool loopback_too) {
  std::string text;
  for (const auto& address : addresses)
    if (loopback_too || !is_loopback(address))
      text += (text.empty() ? "" : ", ") + address.to_string();
  return text;
}
}  // namespace

std::string HostAddresses::off_loopback() const { return joined(addresses, false); }
std::string HostAddresses::listed() const { return joined(addresses, true); }

HostAddresses resolve_host(const std::string& host) {
  HostAddresses found;
  asio::io_context io;
  ErrorCode error;
  const auto results = tcp::resolver(io).resolve(host, "", error);
  if (error) {
    found.error = error.message();
    return found;
  }
  for (const auto& entry : results) {
    const auto address = entry.endpoint().address();
    if (std::find(found.addresses.begin(), found.addresses.end(), address) ==
        found.addresses.end())
      found.addresses.push_back(address);
  }
  if (found.addresses.empty()) found.error = "no address";
  return found;
}

namespace {
const std::string kExportToken =
    "export the same RINGLAB_JOB_TOKEN=<secret> to every rank (e.g. $(openssl rand -hex 32))";
}  // namespace

void require_loopback_bind(const WorldSpec& r) {
  if (!r.job_token.empty()) return;
  const HostAddresses bind = resolve_host(r.bind_addr);
  if (bind.on_loopback()) return;
  const std::string me = "rank " + std::to_string(r.rank);
  if (!bind.resolved())
    throw std::invalid_argument(me + ": RINGLAB_BIND_ADDR=" + r.bind_addr + " does not resolve (" +
                                bind.error + "): give an address of this host, or leave "
                                "RINGLAB_BIND_ADDR unset to stay on loopback");
  throw std::invalid_argument(
      me + ": RINGLAB_BIND_ADDR=" + r.bind_addr + " is " + bind.off_loopback() +
      ", off loopback: it opens this job to other machines, and the job has no token: " +
      kExportToken + ", or leave RINGLAB_BIND_ADDR unset to stay on loopback");
}

std::string loopback_store_host(const WorldSpec& r) {
  if (!r.job_token.empty()) return r.master_addr;
  const HostAddresses master = resolve_host(r.master_addr);
  if (!master.resolved()) return r.master_addr;
  for (const auto& address : master.addresses)
    if (is_loopback(address)) return address.to_string();
  throw std::invalid_argument(
      "rank " + std::to_string(r.rank) + ": MASTER_ADDR=" + r.master_addr + " is " +
      master.off_loopback() +
      ", off loopback, and this job has no token (RINGLAB_JOB_TOKEN is not set): rank 0 hosts "
      "the store on loopback, so rank 0 refuses it too, and a rank without a token reaches only "
      "loopback. For ranks on this machine export MASTER_ADDR=127.0.0.1; for ranks on several, "
      "export RINGLAB_BIND_ADDR=<each host's address> and the same RINGLAB_JOB_TOKEN=<secret> to "
      "every rank");
}

void require_loopback_peer(const WorldSpec& r, int peer, const std::string& address,
                           const tcp::resolver::results_type& endpoints) {
  if (!r.job_token.empty()) return;
  HostAddresses found;
  for (const auto& entry : endpoints) found.addresses.push_back(entry.endpoint().address());
  if (found.on_loopback()) return;
  throw CommError(
      "rank " + std::to_string(r.rank) + ": the store names " + address + " as rank " +
      std::to_string(peer) + "'s address, which is not on loopback (" + found.off_loopback() +
      "), and this job has no token (RINGLAB_JOB_TOKEN is not set): a rank without one listens "
      "and connects on loopback only, since nothing tells its peers from a stranger. Whoever can "
      "write to the store may have put that address there (torch's stores authenticate nobody), "
      "or rank " + std::to_string(peer) + " runs on another host; this rank does not connect "
      "there. To run ranks on several hosts, " + kExportToken);
}

bool may_accept(const WorldSpec& r, const tcp::socket& socket) {
  if (!r.job_token.empty()) return true;
  ErrorCode error;
  const auto remote = socket.remote_endpoint(error);
  return !error && is_loopback(remote.address());
}

}  // namespace ringlab::tcp
