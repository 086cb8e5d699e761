// TcpTransport: the Transport interface over the engine (engine.cpp), plus
// access to the rendezvous store. Argument checks happen here, once, so the
// engine only ever sees valid peers.
#include "transport/tcp/transport_impl.hpp"

namespace ringlab::tcp {

TcpTransport::TcpTransport(std::unique_ptr<Impl> impl)
    : Transport(impl->engine->scratch_pool()), impl_(std::move(impl)) {}

TcpTransport::~TcpTransport() {
  // Deliver what is still queued (sends whose requests were dropped) before
  // closing, within the usual timeout.
  if (impl_ && impl_->engine) impl_->engine->shutdown(timeout());
}

int TcpTransport::rank() const { return impl_->engine->rank(); }
int TcpTransport::size() const { return impl_->engine->size(); }

std::unique_ptr<Request> TcpTransport::isend(int dst, Tag tag, ConstBytes data) {
  check_peer(dst, "destination rank");
  return impl_->engine->isend(dst, tag, data);
}

std::unique_ptr<Request> TcpTransport::irecv(int src, Tag tag, MutBytes data) {
  check_source(src, "source rank");
  return impl_->engine->irecv(src, tag, data);
}

std::unique_ptr<Request> TcpTransport::isend_typed(int dst, Tag tag, ConstBytes data, DType dtype) {
  check_peer(dst, "destination rank");
  return impl_->engine->isend(dst, tag, data, element_code(dtype));
}

std::unique_ptr<Request> TcpTransport::irecv_typed(int src, Tag tag, MutBytes data, DType dtype) {
  check_source(src, "source rank");
  return impl_->engine->irecv(src, tag, data, element_code(dtype));
}

void TcpTransport::sendrecv(int dst, Tag send_tag, ConstBytes send_data, int src, Tag recv_tag,
                            MutBytes recv_data) {
  check_peer(dst, "destination rank");
  check_source(src, "source rank");
  // Receive posted first, so the payload lands in place; while waiting for the
  // send, the same poll() loop reads the incoming message (full duplex).
  auto recv_request = impl_->engine->irecv(src, recv_tag, recv_data);
  auto send_request = impl_->engine->isend(dst, send_tag, send_data);
  send_request->wait(timeout());
  recv_request->wait(timeout());
}

store::Store& TcpTransport::store() { return *impl_->store; }
std::shared_ptr<store::Store> TcpTransport::shared_store() { return impl_->store; }
std::uint64_t TcpTransport::job_id() const { return impl_->job_id; }
bool TcpTransport::prefers_fewer_messages() const { return impl_->prefers_fewer_messages; }
bool TcpTransport::overlaps_transfers() const { return impl_->overlaps_transfers; }

}  // namespace ringlab::tcp
