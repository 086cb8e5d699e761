#include "transport/transport.hpp"

#include <cstring>
#include <sstream>
#include <utility>

#include "transport/scratch_pool.hpp"

namespace ringlab {

namespace {
constexpr Tag kCollectiveBit = Tag{1} << 63;
}

std::string describe_tag(Tag tag) {
  std::ostringstream out;
  if (tag == kSetupTag)
    out << "the transport's setup";
  else if (tag & kCollectiveBit)
    out << "collective #" << ((tag & ~kCollectiveBit) >> 20) << " step " << (tag & 0xFFFFF);
  else
    out << "tag " << tag;
  return out.str();
}

std::string describe_source(int src) {
  return src == kAnySource ? "any rank" : "rank " + std::to_string(src);
}

std::string timeout_message(int rank, const char* verb, int peer, Tag tag, Duration timeout) {
  std::ostringstream out;
  out << "rank " << rank << " timed out after " << timeout.count() << " ms waiting to " << verb
      << " " << describe_source(peer) << " (" << describe_tag(tag) << "); is "
      << (peer == kAnySource ? "the rank that should send it" : describe_source(peer))
      << " alive and running the same collectives in the same order?";
  return out.str();
}

std::string size_mismatch_message(int rank, int src, Tag tag, std::size_t expected,
                                  std::size_t got) {
  std::ostringstream out;
  out << "rank " << rank << " expected " << expected << " bytes from rank " << src << " ("
      << describe_tag(tag) << ") but the message has " << got
      << " bytes: the ranks passed tensors of different sizes or dtypes";
  return out.str();
}

std::string dtype_mismatch_message(int rank, int src, Tag tag, DType expected, DType got) {
  std::ostringstream out;
  out << "rank " << rank << " expected " << dtype_name(expected) << " elements from rank " << src
      << " (" << describe_tag(tag) << ") but the message holds " << dtype_name(got)
      << ": the ranks passed tensors of different dtypes (of the same size in bytes); send and "
         "receive with the same dtype";
  return out.str();
}

std::string peer_failed_message(int rank, int peer, Tag tag, int failed_rank) {
  std::ostringstream out;
  out << "rank " << rank << " stopped waiting for " << describe_source(peer) << " ("
      << describe_tag(tag)
      << ") because rank " << failed_rank << " failed";
  return out.str();
}

void FailedRequest::wait(Duration) {
  if (failed_peer_ >= 0) throw PeerError(failed_peer_, error_);
  throw CommError(error_);
}

void Transport::sendrecv(int dst, Tag send_tag, ConstBytes send_data, int src, Tag recv_tag,
                         MutBytes recv_data) {
  auto recv_request = irecv(src, recv_tag, recv_data);
  auto send_request = isend(dst, send_tag, send_data);
  send_request->wait(timeout());
  recv_request->wait(timeout());
}

std::unique_ptr<Request> Transport::isend_typed(int dst, Tag tag, ConstBytes data, DType) {
  return isend(dst, tag, data);
}
std::unique_ptr<Request> Transport::irecv_typed(int src, Tag tag, MutBytes data, DType) {
  return irecv(src, tag, data);
}

void Transport::send(int dst, Tag tag, ConstBytes data) { isend(dst, tag, data)->wait(timeout()); }

void Transport::recv(int src, Tag tag, MutBytes data) { irecv(src, tag, data)->wait(timeout()); }

Transport::Transport() : Transport(ScratchPool::create()) {}
Transport::Transport(std::shared_ptr<ScratchPool> scratch_pool)
    : scratch_pool_(std::move(scratch_pool)) {}
Transport::~Transport() = default;

Buffer Transport::allocate(std::size_t bytes) { return scratch_pool_->take(bytes); }

void Transport::copy(MutBytes dst, ConstBytes src) {
  if (!src.empty()) std::memmove(dst.data(), src.data(), src.size());
}

void Transport::reduce(DType dtype, ReduceOp op, MutBytes acc, ConstBytes in) {
  reduce_host(dtype, op, acc.data(), in.data(), acc.size() / element_size(dtype));
}

void Transport::divide(DType dtype, MutBytes data, int world_size) {
  divide_host(dtype, data.data(), data.size() / element_size(dtype), world_size);
}

void Transport::check_peer(int peer, const char* what) const {
  if (peer >= 0 && peer < size() && peer != rank()) return;
  std::ostringstream out;
  out << "rank " << rank() << ": " << what << " = " << peer;
  if (peer == rank())
    out << " is this rank itself; a rank cannot send to or receive from itself";
  else
    out << " is not a rank of this world; valid ranks are 0.." << size() - 1;
  throw std::invalid_argument(out.str());
}

void Transport::check_source(int src, const char* what) const {
  if (src != kAnySource) return check_peer(src, what);
  std::ostringstream out;
  out << "rank " << rank() << ": " << what << " = any source (" << kAnySource << "): ";
  if (!receives_from_any_source())
    out << "the " << name()
        << " transport cannot receive from any source here; name the rank to receive from "
           "(NCCL, and nccl_rules, which keeps its rules, post every receive for one sender)";
  else if (size() < 2)
    out << "this world has no other rank to receive from";
  else
    return;
  throw std::invalid_argument(out.str());
}

}  // namespace ringlab
