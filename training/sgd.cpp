#include "training/sgd.hpp"

#include <stdexcept>

namespace ringlab::training {

namespace {

void check_options(const SgdOptions& o) {
  const auto invalid = [](const std::string& what, double value) {
    throw std::invalid_argument("SGD: invalid " + what + ": " + std::to_string(value) +
                                " (it must be >= 0)");
  };
  if (o.lr < 0) invalid("learning rate", o.lr);
  if (o.momentum < 0) invalid("momentum value", o.momentum);
  if (o.weight_decay < 0) invalid("weight_decay value", o.weight_decay);
  if (o.nesterov && (o.momentum <= 0 || o.dampening != 0))
    throw std::invalid_argument("SGD: Nesterov momentum requires a momentum and zero dampening");
}

}  // namespace

SGD::SGD(std::vector<Parameter*> params, SgdOptions options)
    : params_(std::move(params)), options_(options), momentum_buffers_(params_.size()) {
  check_options(options_);
  if (params_.empty()) throw std::invalid_argument("SGD: optimizer got an empty parameter list");
}

void SGD::set_lr(double lr) {
  SgdOptions changed = options_;
  changed.lr = lr;
  check_options(changed);
  options_ = changed;
}

void SGD::zero_grad() {
  for (Parameter* p : params_) p->grad.fill(0.0f);
}

void SGD::step() {
  const auto lr = static_cast<float>(options_.lr);
  const auto momentum = static_cast<float>(options_.momentum);
  const auto dampening = static_cast<float>(options_.dampening);
  const auto weight_decay = static_cast<float>(options_.weight_decay);
  for (std::size_t k = 0; k < params_.size(); ++k) {
    Parameter& p = *params_[k];
    FloatTensor d = p.grad;
    if (weight_decay != 0.0f)
      for (std::size_t i = 0; i < d.numel(); ++i) d[i] += weight_decay * p.value[i];
    if (momentum != 0.0f) {
      std::optional<FloatTensor>& buf = momentum_buffers_[k];
      if (!buf) {
        buf = d;
      } else {
        for (std::size_t i = 0; i < d.numel(); ++i)
          (*buf)[i] = momentum * (*buf)[i] + (1.0f - dampening) * d[i];
      }
      for (std::size_t i = 0; i < d.numel(); ++i)
        d[i] = options_.nesterov ? d[i] + momentum * (*buf)[i] : (*buf)[i];
    }
    for (std::size_t i = 0; i < d.numel(); ++i) p.value[i] -= lr * d[i];
  }
}

OptimizerState SGD::state_dict() const { return {options_, momentum_buffers_}; }

void SGD::load_state_dict(const OptimizerState& state) {
  if (state.momentum_buffers.size() != params_.size())
    throw std::invalid_argument(
        "SGD: loaded state dict contains a parameter group that doesn't match the size of "
        "optimizer's group: the state has " +
        std::to_string(state.momentum_buffers.size()) + " parameters, this optimizer " +
        std::to_string(params_.size()));
  for (std::size_t k = 0; k < params_.size(); ++k) {
    const auto& buf = state.momentum_buffers[k];
    if (buf && !buf->same_shape(params_[k]->value))
      throw std::invalid_argument("SGD: the momentum buffer of parameter " + std::to_string(k) +
                                  " has shape " + buf->shape_string() + ", the parameter " +
                                  params_[k]->value.shape_string());
  }
  check_options(state.options);
  options_ = state.options;
  momentum_buffers_ = state.momentum_buffers;
}

}  // namespace ringlab::training
