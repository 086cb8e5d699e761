// Where a job without a token may listen and connect: loopback only.
//
// A job without a token has nothing to tell its ranks from a stranger: the
// proofs of the handshake (mesh.hpp) are keyed with the empty string, and its
// store may authenticate nobody (torch's TCPStore listens on every
// interface, and whoever reaches it may rewrite the addresses the ranks
// publish there). So its ranks listen on loopback, and connect only to
// loopback addresses, whatever the store names: a stranger on another host
// cannot steer a rank to itself (issue 33, item 1). Processes on the same
// machine can still join such a job; README's "Security" says so.
#pragma once

#include <string>
#include <vector>

#include "net/asio.hpp"
#include "transport/tcp/tcp.hpp"

namespace ringlab::tcp {

// 127.0.0.0/8, ::1, and IPv4 loopback written as IPv6 (::ffff:127.0.0.1).
bool is_loopback(const boost::asio::ip::address& address);

// What a host name or numeric address resolves to.
struct HostAddresses {
  std::vector<boost::asio::ip::address> addresses;
  std::string error;  // why it did not resolve ("" when it did)

  bool resolved() const { return error.empty() && !addresses.empty(); }
  // Resolved, and every address is on loopback.
  bool on_loopback() const;
  // "192.0.2.1" or "10.0.0.1, 10.0.0.2": the addresses that are not on loopback.
  std::string off_loopback() const;
  // "127.0.0.1" or "127.0.0.1, ::1": all of them.
  std::string listed() const;
};
HostAddresses resolve_host(const std::string& host);

// What an open job (no job token) may do; each throws std::invalid_argument
// (the first two) or CommError (the last), saying what was wrong and what
// to do, and does nothing for a job with a token.
//
// Its ranks bind to loopback: RINGLAB_BIND_ADDR must resolve to loopback
// addresses only ("localhost" does).
void require_loopback_bind(const WorldSpec& r);
// A rank other than 0 reaches rank 0's store on loopback, where an open
// rank 0 hosts it: the first loopback address MASTER_ADDR resolves to (the
// one rank 0's store listens on), or MASTER_ADDR itself where it does not
// resolve (connecting says so). A MASTER_ADDR off loopback is refused at
// once: rank 0 refuses it too (it cannot listen there).
std::string loopback_store_host(const WorldSpec& r);
// The address the store names for peer ("host:port"), resolved to
// `endpoints`, must be on loopback: a stranger who can write to the store
// cannot steer this rank to another host. The error names the address, the
// peer and what to do.
void require_loopback_peer(const WorldSpec& r, int peer, const std::string& address,
                           const boost::asio::ip::tcp::resolver::results_type& endpoints);
// Whether a connection that reached this rank's listener comes from where
// this job's ranks may be: anywhere with a token, loopback without. (An open
// job listens on loopback only; this is the second line, should a route
// still bring a connection from elsewhere.)
bool may_accept(const WorldSpec& r, const boost::asio::ip::tcp::socket& socket);

}  // namespace ringlab::tcp
