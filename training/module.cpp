#include "training/module.hpp"

#include <algorithm>
#include <stdexcept>

namespace ringlab::training {

// ---- Parameter -----------------------------------------------------------------

int Parameter::add_grad_hook(GradHook hook) {
  hooks_.emplace_back(next_hook_id_, std::move(hook));
  return next_hook_id_++;
}

void Parameter::remove_grad_hook(int id) {
  std::erase_if(hooks_, [id](const auto& entry) { return entry.first == id; });
}

void Parameter::grad_ready() {
  for (auto& [id, hook] : hooks_) hook(*this);
}

const FloatTensor* find_entry(const StateDict& state, std::string_view name) {
  for (const StateEntry& entry : state)
    if (entry.name == name) return &entry.value;
  return nullptr;
}

// ---- Module --------------------------------------------------------------------

std::vector<Parameter*> Module::parameters() {
  std::vector<Parameter*> list;
  for (const NamedParameter& p : named_parameters()) list.push_back(p.parameter);
  return list;
}

void Module::zero_grad() {
  for (Parameter* p : parameters()) p->grad.fill(0.0f);
}

StateDict Module::state_dict() {
  StateDict state;
  for (const NamedParameter& p : named_parameters()) state.push_back({p.name, p.parameter->value});
  for (const NamedBuffer& b : named_buffers()) state.push_back({b.name, *b.buffer});
  return state;
}

namespace {

std::string quoted_list(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + ("\"" + n + "\"");
  return text;
}

}  // namespace

void Module::load_state_dict(const StateDict& state, bool strict) {
  std::vector<std::pair<std::string, FloatTensor*>> targets;
  for (const NamedParameter& p : named_parameters())
    targets.emplace_back(p.name, &p.parameter->value);
  for (const NamedBuffer& b : named_buffers()) targets.emplace_back(b.name, b.buffer);

  std::vector<std::string> missing, unexpected, mismatched;
  for (const auto& [name, target] : targets) {
    const FloatTensor* source = find_entry(state, name);
    if (!source) {
      missing.push_back(name);
    } else if (!source->same_shape(*target)) {
      mismatched.push_back(
          "size mismatch for " + name + ": copying a param with shape " + source->shape_string() +
          " from checkpoint, the shape in current model is " + target->shape_string() + ".");
    }
  }
  for (const StateEntry& entry : state) {
    const bool known = std::any_of(targets.begin(), targets.end(),
                                   [&](const auto& t) { return t.first == entry.name; });
    if (!known) unexpected.push_back(entry.name);
  }

  std::string errors;
  if (strict && !missing.empty())
    errors += "\n\tMissing key(s) in state_dict: " + quoted_list(missing) + ".";
  if (strict && !unexpected.empty())
    errors += "\n\tUnexpected key(s) in state_dict: " + quoted_list(unexpected) + ".";
  for (const std::string& m : mismatched) errors += "\n\t" + m;
  if (!errors.empty()) {
    const auto starts_with_module = [](const std::string& n) { return n.rfind("module.", 0) == 0; };
    const bool saved_wrapped =
        !unexpected.empty() &&
        std::all_of(unexpected.begin(), unexpected.end(), starts_with_module);
    const bool expects_wrapped =
        !missing.empty() && std::all_of(missing.begin(), missing.end(), starts_with_module);
    if (saved_wrapped && !expects_wrapped)
      errors +=
          "\n\t(the keys start with \"module.\": this state was saved from a "
          "DistributedDataParallel model; load it into one, or into its .module() "
          "after removing the prefix)";
    else if (expects_wrapped && !saved_wrapped)
      errors +=
          "\n\t(this DistributedDataParallel model expects keys starting with \"module.\"; "
          "the state was saved from an unwrapped model: load it into .module())";
    throw std::invalid_argument("Error(s) in loading state_dict for " + describe() + ":" + errors);
  }
  for (const auto& [name, target] : targets)
    if (const FloatTensor* source = find_entry(state, name)) *target = *source;
}

// ---- Linear --------------------------------------------------------------------

Linear::Linear(std::int64_t in_features, std::int64_t out_features, bool with_bias)
    : weight(FloatTensor::matrix(out_features, in_features)),
      bias(FloatTensor::vector(with_bias ? out_features : 0)),
      in_features_(in_features),
      out_features_(out_features),
      has_bias_(with_bias) {
  if (in_features <= 0 || out_features <= 0)
    throw std::invalid_argument("Linear: in_features and out_features must be positive, got " +
                                std::to_string(in_features) + " and " +
                                std::to_string(out_features));
}

std::string Linear::describe() const {
  return "Linear(in_features=" + std::to_string(in_features_) +
         ", out_features=" + std::to_string(out_features_) +
         ", bias=" + (has_bias_ ? "True" : "False") + ")";
}

FloatTensor Linear::forward(const FloatTensor& input) {
  if (input.dim() != 2 || input.cols() != in_features_)
    throw std::invalid_argument(describe() + ": input of shape " + input.shape_string() +
                                " cannot be multiplied with the weight (mat1 and mat2 shapes "
                                "cannot be multiplied (" +
                                std::to_string(input.rows()) + "x" +
                                std::to_string(input.dim() == 2 ? input.cols() : 1) + " and " +
                                std::to_string(in_features_) + "x" + std::to_string(out_features_) +
                                ")): pass [batch, " + std::to_string(in_features_) + "]");
  input_ = input;
  has_input_ = true;
  const std::int64_t batch = input.rows();
  FloatTensor output = FloatTensor::matrix(batch, out_features_);
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t o = 0; o < out_features_; ++o) {
      float sum = 0.0f;
      for (std::int64_t i = 0; i < in_features_; ++i) sum += input.at(n, i) * weight.value.at(o, i);
      output.at(n, o) = sum + (has_bias_ ? bias.value[static_cast<std::size_t>(o)] : 0.0f);
    }
  return output;
}

FloatTensor Linear::backward(const FloatTensor& grad_output) {
  if (!has_input_) throw std::logic_error(describe() + ": backward before forward");
  const std::int64_t batch = input_.rows();
  if (grad_output.dim() != 2 || grad_output.rows() != batch || grad_output.cols() != out_features_)
    throw std::invalid_argument(describe() + ": gradient of shape " + grad_output.shape_string() +
                                " does not match the output [" + std::to_string(batch) + ", " +
                                std::to_string(out_features_) + "]");
  // dL/db[o] = sum_n g[n][o]. The bias gradient is finished first, then the
  // weight's: their hooks fire in reverse parameter order, the order DDP's
  // buckets expect.
  if (has_bias_) {
    for (std::int64_t o = 0; o < out_features_; ++o) {
      float sum = 0.0f;
      for (std::int64_t n = 0; n < batch; ++n) sum += grad_output.at(n, o);
      bias.grad[static_cast<std::size_t>(o)] += sum;
    }
    bias.grad_ready();
  }
  // dL/dW[o][i] = sum_n g[n][o] x[n][i]
  for (std::int64_t o = 0; o < out_features_; ++o)
    for (std::int64_t i = 0; i < in_features_; ++i) {
      float sum = 0.0f;
      for (std::int64_t n = 0; n < batch; ++n) sum += grad_output.at(n, o) * input_.at(n, i);
      weight.grad.at(o, i) += sum;
    }
  weight.grad_ready();
  // dL/dx[n][i] = sum_o g[n][o] W[o][i]
  FloatTensor grad_input = FloatTensor::matrix(batch, in_features_);
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t i = 0; i < in_features_; ++i) {
      float sum = 0.0f;
      for (std::int64_t o = 0; o < out_features_; ++o)
        sum += grad_output.at(n, o) * weight.value.at(o, i);
      grad_input.at(n, i) = sum;
    }
  return grad_input;
}

std::vector<NamedParameter> Linear::named_parameters() {
  std::vector<NamedParameter> list{{"weight", &weight}};
  if (has_bias_) list.push_back({"bias", &bias});
  return list;
}

// ---- ReLU ----------------------------------------------------------------------

FloatTensor ReLU::forward(const FloatTensor& input) {
  output_ = input;
  for (float& v : output_.values()) v = v > 0.0f ? v : 0.0f;
  has_output_ = true;
  return output_;
}

FloatTensor ReLU::backward(const FloatTensor& grad_output) {
  if (!has_output_) throw std::logic_error("ReLU: backward before forward");
  if (!grad_output.same_shape(output_))
    throw std::invalid_argument("ReLU: gradient of shape " + grad_output.shape_string() +
                                " does not match the output " + output_.shape_string());
  FloatTensor grad_input = grad_output;
  for (std::size_t i = 0; i < grad_input.numel(); ++i)
    if (!(output_[i] > 0.0f)) grad_input[i] = 0.0f;
  return grad_input;
}

// ---- Sequential ----------------------------------------------------------------

Module& Sequential::add(std::string name, std::unique_ptr<Module> child) {
  children_.emplace_back(std::move(name), std::move(child));
  return *children_.back().second;
}

Module& Sequential::child(std::string_view name) {
  for (auto& [n, c] : children_)
    if (n == name) return *c;
  throw std::invalid_argument(type_name_ + " has no child named '" + std::string(name) + "'");
}

FloatTensor Sequential::forward(const FloatTensor& input) {
  FloatTensor x = input;
  for (auto& [name, child] : children_) x = child->forward(x);
  return x;
}

FloatTensor Sequential::backward(const FloatTensor& grad_output) {
  FloatTensor g = grad_output;
  for (auto it = children_.rbegin(); it != children_.rend(); ++it) g = it->second->backward(g);
  return g;
}

std::vector<NamedParameter> Sequential::named_parameters() {
  std::vector<NamedParameter> list;
  for (auto& [name, child] : children_)
    for (NamedParameter p : child->named_parameters())
      list.push_back({name + "." + p.name, p.parameter});
  return list;
}

std::vector<NamedBuffer> Sequential::named_buffers() {
  std::vector<NamedBuffer> list;
  for (auto& [name, child] : children_)
    for (NamedBuffer b : child->named_buffers()) list.push_back({name + "." + b.name, b.buffer});
  return list;
}

ToyModel::ToyModel() : Sequential("ToyModel") {
  net1_ = static_cast<Linear*>(&add("net1", std::make_unique<Linear>(10, 10)));
  add("relu", std::make_unique<ReLU>());
  net2_ = static_cast<Linear*>(&add("net2", std::make_unique<Linear>(10, 5)));
}

}  // namespace ringlab::training
