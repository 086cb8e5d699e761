// Parameters, modules and state dicts, named as in torch.nn.
//
// A Module computes forward(input) and remembers what its backward needs;
// backward(grad_output) adds the gradient of every parameter into
// parameter.grad (it accumulates, as PyTorch's does, until zero_grad()),
// announces each finished gradient to the parameter's hooks, and returns the
// gradient of its input. There is no autograd graph: each layer's backward is
// written by hand, and a container runs its children's backward in reverse.
//
//   ToyModel model;                            // net1, relu, net2
//   FloatTensor out = model.forward(x);
//   float loss = loss_fn.forward(out, y);
//   model.backward(loss_fn.backward());        // loss.backward()
//   model.state_dict();                        // net1.weight, net1.bias, ...
//
// The hooks are how DistributedDataParallel and the Horovod-style optimizer
// learn, during backward, that a gradient is ready to be communicated (PyTorch:
// a hook on the parameter's gradient accumulator).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "training/float_tensor.hpp"

namespace ringlab::training {

class Parameter {
 public:
  using GradHook = std::function<void(Parameter&)>;

  Parameter() = default;
  explicit Parameter(FloatTensor initial) : value(std::move(initial)), grad(value.shape()) {}
  // A copy has the value and gradient, not the hooks (they belong to whoever
  // registered them on the original).
  Parameter(const Parameter& other) : value(other.value), grad(other.grad) {}
  Parameter& operator=(const Parameter& other) {
    value = other.value;
    grad = other.grad;
    return *this;
  }

  FloatTensor value;
  FloatTensor grad;  // same shape as value; zeros until a backward adds to it

  // Hooks run, in the order added, each time backward has finished adding
  // into grad. Returns an id for remove_grad_hook.
  int add_grad_hook(GradHook hook);
  void remove_grad_hook(int id);
  // Called by a layer's backward when grad is complete.
  void grad_ready();

 private:
  std::vector<std::pair<int, GradHook>> hooks_;
  int next_hook_id_ = 0;
};

struct NamedParameter {
  std::string name;  // "net1.weight"
  Parameter* parameter;
};
struct NamedBuffer {
  std::string name;
  FloatTensor* buffer;
};

// One entry of a state dict: a name and a copy of the values.
struct StateEntry {
  std::string name;
  FloatTensor value;
};
// model.state_dict(): the entries in the module's order (parameters, then
// buffers), as PyTorch's OrderedDict.
using StateDict = std::vector<StateEntry>;

// nullptr when there is no entry of that name.
const FloatTensor* find_entry(const StateDict& state, std::string_view name);

class Module {
 public:
  virtual ~Module() = default;
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  virtual FloatTensor forward(const FloatTensor& input) = 0;
  virtual FloatTensor backward(const FloatTensor& grad_output) = 0;
  // In registration order, with PyTorch's dotted names.
  virtual std::vector<NamedParameter> named_parameters() { return {}; }
  virtual std::vector<NamedBuffer> named_buffers() { return {}; }
  // "Linear(in_features=10, out_features=5, bias=True)", "ToyModel".
  virtual std::string describe() const = 0;

  std::vector<Parameter*> parameters();
  void zero_grad();  // optimizer.zero_grad() with set_to_none=False
  StateDict state_dict();
  // Copies every entry in. strict (PyTorch's default): the names must match
  // exactly. A missing or unexpected name or a shape mismatch throws
  // std::invalid_argument listing all of them, as PyTorch does, with a hint
  // when the keys carry DDP's "module." prefix (or lack it).
  void load_state_dict(const StateDict& state, bool strict = true);
};

// nn.Linear(in_features, out_features, bias): y = x W^T + b.
class Linear final : public Module {
 public:
  Linear(std::int64_t in_features, std::int64_t out_features, bool bias = true);

  FloatTensor forward(const FloatTensor& input) override;
  FloatTensor backward(const FloatTensor& grad_output) override;
  std::vector<NamedParameter> named_parameters() override;
  std::string describe() const override;

  std::int64_t in_features() const { return in_features_; }
  std::int64_t out_features() const { return out_features_; }
  bool has_bias() const { return has_bias_; }

  Parameter weight;  // [out_features, in_features]
  Parameter bias;    // [out_features]; unused when has_bias() is false

 private:
  std::int64_t in_features_, out_features_;
  bool has_bias_;
  FloatTensor input_;  // the last forward's input, for backward
  bool has_input_ = false;
};

// nn.ReLU: max(x, 0); its gradient passes where the output is positive.
class ReLU final : public Module {
 public:
  FloatTensor forward(const FloatTensor& input) override;
  FloatTensor backward(const FloatTensor& grad_output) override;
  std::string describe() const override { return "ReLU()"; }

 private:
  FloatTensor output_;
  bool has_output_ = false;
};

// Named children run in order (forward) and in reverse (backward); a child's
// parameters are named "<child>.<name>", as attributes of an nn.Module are.
class Sequential : public Module {
 public:
  explicit Sequential(std::string type_name) : type_name_(std::move(type_name)) {}
  Module& add(std::string name, std::unique_ptr<Module> child);

  FloatTensor forward(const FloatTensor& input) override;
  FloatTensor backward(const FloatTensor& grad_output) override;
  std::vector<NamedParameter> named_parameters() override;
  std::vector<NamedBuffer> named_buffers() override;
  std::string describe() const override { return type_name_; }

  Module& child(std::string_view name);

 private:
  std::string type_name_;
  std::vector<std::pair<std::string, std::unique_ptr<Module>>> children_;
};

// The articles' ToyModel: net1 = Linear(10, 10), relu, net2 = Linear(10, 5).
// Weights and biases are zero until initialized (init.hpp).
class ToyModel final : public Sequential {
 public:
  ToyModel();
  Linear& net1() { return *net1_; }
  Linear& net2() { return *net2_; }

 private:
  Linear* net1_;
  Linear* net2_;
};

}  // namespace ringlab::training
