#include "training/ddp.hpp"

#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "training/buckets.hpp"

namespace ringlab::training {

std::string_view event_name(DdpEvent::Kind kind) {
  switch (kind) {
    case DdpEvent::Kind::GradientReady:
      return "gradient ready";
    case DdpEvent::Kind::AllReduceStarted:
      return "all_reduce started";
    case DdpEvent::Kind::AllReduceDone:
      return "all_reduce done";
    case DdpEvent::Kind::Averaged:
      return "averaged";
  }
  return "?";
}

std::string describe(const DdpEvent& event) {
  char time[32];
  std::snprintf(time, sizeof time, "%.6f s", event.seconds);
  std::string text = std::string(time) + "  ";
  if (event.kind == DdpEvent::Kind::GradientReady)
    text += "gradient of " + event.name + " ready (bucket " + std::to_string(event.bucket) + ")";
  else
    text += "bucket " + std::to_string(event.bucket) + " " + std::string(event_name(event.kind));
  return text;
}

namespace {

DdpEvent bucket_event(DdpEvent::Kind kind, int bucket) {
  DdpEvent event;
  event.kind = kind;
  event.bucket = bucket;
  return event;
}

std::string ddp_prefix(const ProcessGroup& pg) {
  return "rank " + std::to_string(pg.rank()) + ": DistributedDataParallel: ";
}

}  // namespace

DistributedDataParallel::DistributedDataParallel(Module& module, ProcessGroup& pg,
                                                 DdpOptions options)
    : module_(module), pg_(pg), options_(options), params_(module.named_parameters()) {
  if (!(options_.bucket_cap_mb >= 0 && options_.bucket_cap_mb <= 1e9))
    throw std::invalid_argument(ddp_prefix(pg_) + "bucket_cap_mb must be between 0 and 1e9, got " +
                                std::to_string(options_.bucket_cap_mb));
  verify_same_shapes();
  broadcast_state();

  // Buckets over the parameters in reverse order (the order backward
  // produces their gradients).
  const std::size_t n = params_.size();
  std::vector<std::size_t> bytes;
  for (std::size_t k = 0; k < n; ++k) bytes.push_back(params_[n - 1 - k].parameter->value.nbytes());
  const auto cap = static_cast<std::size_t>(options_.bucket_cap_mb * 1024 * 1024);
  const std::size_t first = std::min(options_.first_bucket_bytes, cap);
  bucket_of_.assign(n, -1);
  slot_of_.assign(n, 0);
  for (const auto& members : assign_buckets(bytes, first, cap)) {
    DdpBucket bucket;
    for (std::size_t position : members) {
      const int index = static_cast<int>(n - 1 - position);
      bucket_of_[static_cast<std::size_t>(index)] = static_cast<int>(buckets_.size());
      slot_of_[static_cast<std::size_t>(index)] = bucket.parameters.size();
      bucket.parameters.push_back(index);
      bucket.offsets.push_back(bucket.numel);
      bucket.numel += params_[static_cast<std::size_t>(index)].parameter->value.numel();
    }
    buckets_.push_back(std::move(bucket));
  }
  state_.resize(buckets_.size());
  for (std::size_t b = 0; b < buckets_.size(); ++b)
    state_[b].flat = Tensor(DType::Float32, {static_cast<std::int64_t>(buckets_[b].numel)});

  for (std::size_t k = 0; k < n; ++k) {
    const int index = static_cast<int>(k);
    hook_ids_.push_back(params_[k].parameter->add_grad_hook(
        [this, index](Parameter&) { on_gradient_ready(index); }));
  }
}

DistributedDataParallel::~DistributedDataParallel() {
  wait_in_flight();
  for (std::size_t k = 0; k < params_.size(); ++k)
    params_[k].parameter->remove_grad_hook(hook_ids_[k]);
}

// The all_reduce of a launched bucket writes into its buffer on the process
// group's worker thread: it must finish before the buffer goes away, even
// when backward failed half-way.
void DistributedDataParallel::wait_in_flight() noexcept {
  for (BucketState& s : state_) {
    if (!s.launched) continue;
    try {
      s.work.wait(pg_.options().timeout);
    } catch (...) {
    }
    s.launched = false;
  }
}

// PyTorch's _verify_param_shape_across_processes: every rank learns every
// rank's shapes, so a mismatch fails everywhere with the same message rather
// than as a size error on some ranks and a hang on others.
void DistributedDataParallel::verify_same_shapes() {
  const int world = pg_.size();
  std::vector<NamedBuffer> buffers = module_.named_buffers();
  std::vector<std::pair<std::string, const FloatTensor*>> tensors;
  for (const NamedParameter& p : params_) tensors.emplace_back(p.name, &p.parameter->value);
  for (const NamedBuffer& b : buffers) tensors.emplace_back(b.name, b.buffer);

  Tensor count = Tensor::zeros(1, DType::Int64);
  count.data<std::int64_t>()[0] = static_cast<std::int64_t>(tensors.size());
  std::vector<Tensor> counts(static_cast<std::size_t>(world), Tensor::zeros(1, DType::Int64));
  pg_.all_gather(counts, count);
  for (int r = 1; r < world; ++r)
    if (counts[static_cast<std::size_t>(r)].data<std::int64_t>()[0] !=
        counts[0].data<std::int64_t>()[0])
      throw std::invalid_argument(
          ddp_prefix(pg_) + "the ranks' models differ: rank " + std::to_string(r) + "'s has " +
          std::to_string(counts[static_cast<std::size_t>(r)].data<std::int64_t>()[0]) +
          " parameters and buffers, rank 0's has " +
          std::to_string(counts[0].data<std::int64_t>()[0]) +
          "; every rank must build the same model");

  // Each tensor as (dims, size 0, size 1).
  const auto n = static_cast<std::int64_t>(tensors.size());
  Tensor shapes = Tensor::zeros(3 * n, DType::Int64);
  for (std::int64_t k = 0; k < n; ++k) {
    const auto& shape = tensors[static_cast<std::size_t>(k)].second->shape();
    auto out = shapes.data<std::int64_t>();
    out[static_cast<std::size_t>(3 * k)] = static_cast<std::int64_t>(shape.size());
    out[static_cast<std::size_t>(3 * k + 1)] = shape[0];
    out[static_cast<std::size_t>(3 * k + 2)] = shape.size() > 1 ? shape[1] : 0;
  }
  std::vector<Tensor> all(static_cast<std::size_t>(world), Tensor::zeros(3 * n, DType::Int64));
  pg_.all_gather(all, shapes);
  const auto shape_of = [&](int r, std::int64_t k) {
    auto v = all[static_cast<std::size_t>(r)].data<std::int64_t>();
    std::vector<std::int64_t> shape{v[static_cast<std::size_t>(3 * k + 1)]};
    if (v[static_cast<std::size_t>(3 * k)] > 1)
      shape.push_back(v[static_cast<std::size_t>(3 * k + 2)]);
    return shape;
  };
  for (int r = 1; r < world; ++r)
    for (std::int64_t k = 0; k < n; ++k)
      if (shape_of(r, k) != shape_of(0, k))
        throw std::invalid_argument(ddp_prefix(pg_) + "the ranks' models differ: " +
                                    tensors[static_cast<std::size_t>(k)].first + " has shape " +
                                    shape_string(shape_of(r, k)) + " on rank " + std::to_string(r) +
                                    " and " + shape_string(shape_of(0, k)) +
                                    " on rank 0; every rank must build the "
                                    "same model");
}

// PyTorch's _sync_module_states: rank 0's parameters and buffers, flattened
// into one buffer (its _broadcast_coalesced), broadcast to every rank.
void DistributedDataParallel::broadcast_state() {
  std::vector<FloatTensor*> tensors;
  for (const NamedParameter& p : params_) tensors.push_back(&p.parameter->value);
  for (const NamedBuffer& b : module_.named_buffers()) tensors.push_back(b.buffer);
  std::size_t total = 0;
  for (const FloatTensor* t : tensors) total += t->numel();
  Tensor flat(DType::Float32, {static_cast<std::int64_t>(total)});
  auto values = flat.data<float>();
  std::size_t at = 0;
  for (const FloatTensor* t : tensors) {
    std::copy(t->values().begin(), t->values().end(),
              values.begin() + static_cast<std::ptrdiff_t>(at));
    at += t->numel();
  }
  pg_.broadcast(flat, 0);
  at = 0;
  for (FloatTensor* t : tensors) {
    std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(at), t->numel(), t->values().begin());
    at += t->numel();
  }
}

std::vector<NamedParameter> DistributedDataParallel::named_parameters() {
  std::vector<NamedParameter> list;
  for (const NamedParameter& p : module_.named_parameters())
    list.push_back({"module." + p.name, p.parameter});
  return list;
}

std::vector<NamedBuffer> DistributedDataParallel::named_buffers() {
  std::vector<NamedBuffer> list;
  for (const NamedBuffer& b : module_.named_buffers())
    list.push_back({"module." + b.name, b.buffer});
  return list;
}

bool DistributedDataParallel::bucket_completed(int b) const {
  const BucketState& s = state_.at(static_cast<std::size_t>(b));
  return s.launched && s.work.is_completed();
}

FloatTensor DistributedDataParallel::forward(const FloatTensor& input) {
  // As PyTorch's forward: whether this iteration's backward synchronizes is
  // decided now (reducer.prepare_for_backward).
  sync_this_backward_ = require_sync_;
  forward_done_ = true;
  return module_.forward(input);
}

void DistributedDataParallel::record(DdpEvent event) {
  event.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - backward_start_).count();
  events_.push_back(event);
  if (observer_) observer_(events_.back());
}

FloatTensor DistributedDataParallel::backward(const FloatTensor& grad_output) {
  if (!forward_done_)
    throw std::logic_error(ddp_prefix(pg_) +
                           "backward without a forward: call forward (the "
                           "model on a batch) before each backward");
  forward_done_ = false;
  backward_start_ = std::chrono::steady_clock::now();
  events_.clear();
  next_to_launch_ = 0;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    state_[b].pending = static_cast<int>(buckets_[b].parameters.size());
    state_[b].launched = false;
    state_[b].seen_done = false;
    state_[b].work = Work();
  }
  FloatTensor grad_input;
  try {
    grad_input = module_.backward(grad_output);
    if (sync_this_backward_) finish_backward();
  } catch (...) {
    wait_in_flight();
    throw;
  }
  return grad_input;
}

void DistributedDataParallel::on_gradient_ready(int index) {
  if (!sync_this_backward_) return;  // no_sync(): the gradient just stays accumulated
  const int b = bucket_of_[static_cast<std::size_t>(index)];
  DdpEvent arrived = bucket_event(DdpEvent::Kind::GradientReady, b);
  arrived.parameter = index;
  arrived.name = params_[static_cast<std::size_t>(index)].name;
  record(std::move(arrived));
  // Copy the gradient into its place in the bucket.
  const DdpBucket& bucket = buckets_[static_cast<std::size_t>(b)];
  BucketState& s = state_[static_cast<std::size_t>(b)];
  const FloatTensor& grad = params_[static_cast<std::size_t>(index)].parameter->grad;
  const std::size_t offset = bucket.offsets[slot_of_[static_cast<std::size_t>(index)]];
  std::copy(grad.values().begin(), grad.values().end(),
            s.flat.data<float>().begin() + static_cast<std::ptrdiff_t>(offset));
  if (--s.pending < 0)
    throw std::logic_error(ddp_prefix(pg_) + "the gradient of " +
                           params_[static_cast<std::size_t>(index)].name +
                           " was produced twice in one backward");
  // Start every bucket that is complete, in bucket order: a later bucket that
  // completes first waits for the earlier ones, so all ranks issue the same
  // all_reduces in the same order.
  while (next_to_launch_ < buckets_.size() && state_[next_to_launch_].pending == 0) {
    BucketState& ready = state_[next_to_launch_];
    if (bucket_hook_) bucket_hook_(static_cast<int>(next_to_launch_), ready.flat);
    ready.work = pg_.all_reduce_async(ready.flat, ReduceOp::SUM);
    ready.launched = true;
    record(bucket_event(DdpEvent::Kind::AllReduceStarted, static_cast<int>(next_to_launch_)));
    ++next_to_launch_;
  }
  poll_completed();
}

void DistributedDataParallel::poll_completed() {
  for (std::size_t b = 0; b < next_to_launch_; ++b) {
    BucketState& s = state_[b];
    if (s.launched && !s.seen_done && s.work.is_completed()) {
      s.seen_done = true;
      record(bucket_event(DdpEvent::Kind::AllReduceDone, static_cast<int>(b)));
    }
  }
}

void DistributedDataParallel::finish_backward() {
  if (next_to_launch_ < buckets_.size()) {
    std::string missing;
    for (std::size_t b = next_to_launch_; b < buckets_.size(); ++b)
      if (state_[b].pending > 0)
        for (int index : buckets_[b].parameters)
          missing += (missing.empty() ? "" : ", ") + params_[static_cast<std::size_t>(index)].name;
    throw std::runtime_error(ddp_prefix(pg_) + "backward produced no gradient for " + missing +
                             ": every parameter must take part in the loss (PyTorch's "
                             "find_unused_parameters=True is not supported)");
  }
  const float world = static_cast<float>(pg_.size());
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    BucketState& s = state_[b];
    try {
      s.work.wait(pg_.options().timeout);
    } catch (const std::exception& e) {
      throw std::runtime_error(ddp_prefix(pg_) + "the all_reduce of bucket " + std::to_string(b) +
                               " failed: " + e.what());
    }
    s.launched = false;
    if (!s.seen_done) {
      s.seen_done = true;
      record(bucket_event(DdpEvent::Kind::AllReduceDone, static_cast<int>(b)));
    }
    // SUM, then divide by the world size; then back into each .grad.
    auto values = s.flat.data<float>();
    for (float& v : values) v /= world;
    const DdpBucket& bucket = buckets_[b];
    for (std::size_t slot = 0; slot < bucket.parameters.size(); ++slot) {
      FloatTensor& grad =
          params_[static_cast<std::size_t>(bucket.parameters[slot])].parameter->grad;
      std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(bucket.offsets[slot]), grad.numel(),
                  grad.values().begin());
    }
    record(bucket_event(DdpEvent::Kind::Averaged, static_cast<int>(b)));
  }
}

}  // namespace ringlab::training
