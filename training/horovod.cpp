#include "training/horovod.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <stdexcept>

namespace ringlab::training::hvd {

namespace {

int local_rank_of(ProcessGroup& pg) {
  if (pg.backend() == "inproc") return pg.rank();
  if (const char* value = std::getenv("LOCAL_RANK")) return std::atoi(value);
  return pg.rank();
}

std::string prefix(const Horovod& hvd) {
  return "rank " + std::to_string(hvd.rank()) + ": horovod: ";
}

void check_root(const Horovod& hvd, int root_rank) {
  if (root_rank < 0 || root_rank >= hvd.size())
    throw std::invalid_argument(prefix(hvd) + "root_rank " + std::to_string(root_rank) +
                                " is out of range: the job has ranks 0.." +
                                std::to_string(hvd.size() - 1));
}

}  // namespace

Horovod::Horovod(ProcessGroup& pg) : pg_(pg), local_rank_(local_rank_of(pg)) {}

Horovod init(ProcessGroup& pg) { return Horovod(pg); }

void broadcast_parameters(Horovod& hvd, Module& model, int root_rank) {
  check_root(hvd, root_rank);
  std::vector<std::pair<std::string, FloatTensor*>> tensors;
  for (const NamedParameter& p : model.named_parameters())
    tensors.emplace_back(p.name, &p.parameter->value);
  for (const NamedBuffer& b : model.named_buffers()) tensors.emplace_back(b.name, b.buffer);
  std::sort(tensors.begin(), tensors.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [name, tensor] : tensors) {
    Tensor wire = tensor->to_tensor();
    hvd.process_group().broadcast(wire, root_rank);
    tensor->copy_from(wire);
  }
}

void broadcast_optimizer_state(Horovod& hvd, SGD& optimizer, int root_rank) {
  check_root(hvd, root_rank);
  ProcessGroup& pg = hvd.process_group();
  OptimizerState state = optimizer.state_dict();
  Tensor settings = Tensor::of({state.options.lr, state.options.momentum, state.options.dampening,
                                state.options.weight_decay, state.options.nesterov ? 1.0 : 0.0},
                               DType::Float64);
  pg.broadcast(settings, root_rank);
  const auto s = settings.data<double>();
  state.options = {.lr = s[0],
                   .momentum = s[1],
                   .dampening = s[2],
                   .weight_decay = s[3],
                   .nesterov = s[4] != 0.0};
  const std::size_t n = state.momentum_buffers.size();
  Tensor has_buffer = Tensor::zeros(static_cast<std::int64_t>(n), DType::Int64);
  for (std::size_t k = 0; k < n; ++k)
    has_buffer.data<std::int64_t>()[k] = state.momentum_buffers[k] ? 1 : 0;
  pg.broadcast(has_buffer, root_rank);
  for (std::size_t k = 0; k < n; ++k) {
    if (!has_buffer.data<std::int64_t>()[k]) {
      state.momentum_buffers[k].reset();
      continue;
    }
    FloatTensor buffer =
        state.momentum_buffers[k].value_or(FloatTensor(optimizer.params()[k]->value.shape()));
    Tensor wire = buffer.to_tensor();
    pg.broadcast(wire, root_rank);
    buffer.copy_from(wire);
    state.momentum_buffers[k] = std::move(buffer);
  }
  optimizer.load_state_dict(state);
}

DistributedOptimizer::DistributedOptimizer(Horovod& hvd, SGD& optimizer,
                                           std::vector<NamedParameter> named_parameters,
                                           FusionOptions options)
    : hvd_(hvd), optimizer_(optimizer), params_(std::move(named_parameters)), options_(options) {
  std::set<std::string> names;
  for (const NamedParameter& p : params_)
    if (!names.insert(p.name).second)
      throw std::invalid_argument(prefix(hvd_) +
                                  "Parameter names in named_parameters must be unique. "
                                  "Found duplicates: " +
                                  p.name);
  for (Parameter* p : optimizer_.params())
    if (std::none_of(params_.begin(), params_.end(),
                     [p](const NamedParameter& n) { return n.parameter == p; }))
      throw std::invalid_argument(prefix(hvd_) +
                                  "named_parameters was specified, but one or more "
                                  "model parameters were not named");
  for (std::size_t k = 0; k < params_.size(); ++k) {
    const int index = static_cast<int>(k);
    hook_ids_.push_back(params_[k].parameter->add_grad_hook(
        [this, index](Parameter&) { on_gradient_ready(index); }));
  }
}

DistributedOptimizer::~DistributedOptimizer() {
  wait_in_flight();
  for (std::size_t k = 0; k < params_.size(); ++k)
    params_[k].parameter->remove_grad_hook(hook_ids_[k]);
}

void DistributedOptimizer::wait_in_flight() noexcept {
  for (InFlight& f : in_flight_) {
    try {
      f.work.wait(hvd_.process_group().options().timeout);
    } catch (...) {
    }
  }
  in_flight_.clear();
}

void DistributedOptimizer::on_gradient_ready(int index) {
  if (hvd_.size() == 1) return;  // Horovod registers no hooks on one process
  const std::size_t bytes = params_[static_cast<std::size_t>(index)].parameter->grad.nbytes();
  if (!open_.empty() && open_bytes_ + bytes > options_.fusion_threshold_bytes) flush();
  open_.push_back(index);
  open_bytes_ += bytes;
  if (open_bytes_ >= options_.fusion_threshold_bytes) flush();
}

void DistributedOptimizer::flush() {
  if (open_.empty()) return;
  InFlight& f = in_flight_.emplace_back();
  Fusion record;
  std::size_t numel = 0;
  for (int index : open_) {
    f.parameters.push_back(index);
    f.offsets.push_back(numel);
    numel += params_[static_cast<std::size_t>(index)].parameter->grad.numel();
    record.tensors.push_back(params_[static_cast<std::size_t>(index)].name);
  }
  f.flat = Tensor(DType::Float32, {static_cast<std::int64_t>(numel)});
  auto values = f.flat.data<float>();
  for (std::size_t slot = 0; slot < f.parameters.size(); ++slot) {
    const FloatTensor& grad = params_[static_cast<std::size_t>(f.parameters[slot])].parameter->grad;
    std::copy(grad.values().begin(), grad.values().end(),
              values.begin() + static_cast<std::ptrdiff_t>(f.offsets[slot]));
  }
  record.bytes = numel * sizeof(float);
  fusions_this_step_.push_back(std::move(record));
  if (fusion_hook_) fusion_hook_(fusions_this_step_.back(), f.flat);
  f.work = hvd_.process_group().all_reduce_async(f.flat, ReduceOp::SUM);
  open_.clear();
  open_bytes_ = 0;
}

void DistributedOptimizer::synchronize() {
  if (hvd_.size() > 1) {
    flush();
    const auto size = static_cast<float>(hvd_.size());
    try {
      for (InFlight& f : in_flight_) {
        f.work.wait(hvd_.process_group().options().timeout);
        auto values = f.flat.data<float>();
        for (std::size_t slot = 0; slot < f.parameters.size(); ++slot) {
          FloatTensor& grad = params_[static_cast<std::size_t>(f.parameters[slot])].parameter->grad;
          for (std::size_t i = 0; i < grad.numel(); ++i)
            grad[i] = values[f.offsets[slot] + i] / size;
        }
      }
    } catch (...) {
      wait_in_flight();
      throw;
    }
    in_flight_.clear();
  }
  fusions_ = std::move(fusions_this_step_);
  fusions_this_step_.clear();
}

void DistributedOptimizer::step() {
  synchronize();
  optimizer_.step();
}

void DistributedOptimizer::zero_grad() {
  if (!in_flight_.empty() || !open_.empty())
    throw std::logic_error(prefix(hvd_) +
                           "optimizer.zero_grad() was called after loss.backward() "
                           "but before optimizer.step() or optimizer.synchronize(). This is "
                           "prohibited as it can cause a race condition.");
  optimizer_.zero_grad();
}

}  // namespace ringlab::training::hvd
