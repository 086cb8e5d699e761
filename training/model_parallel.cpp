#include "training/model_parallel.hpp"

#include <stdexcept>

namespace ringlab::training {

FloatTensor to_device(const FloatTensor& t, const Device& from, const Device& to,
                      const std::string& what, std::vector<Transfer>& log) {
  if (from.index == to.index) return t;  // .to() of a tensor already there: no copy
  log.push_back({what, from, to, t.nbytes()});
  return FloatTensor(t);  // the other device's own copy
}

ToyMpModel::ToyMpModel(Device dev0, Device dev1)
    : dev0_(dev0), dev1_(dev1), net1_(10, 10), net2_(10, 5) {
  if (dev0.index == dev1.index)
    throw std::invalid_argument("ToyMpModel: net1 and net2 on the same device " + dev0.name() +
                                " is no model parallelism: give two devices");
}

FloatTensor ToyMpModel::forward(const FloatTensor& input) {
  // The input is already in this process's memory: x.to(dev0) copies nothing
  // that the lesson counts.
  const FloatTensor activations = relu_.forward(net1_.forward(input));
  return net2_.forward(to_device(activations, dev0_, dev1_, "activations", transfers_));
}

FloatTensor ToyMpModel::backward(const FloatTensor& grad_output) {
  const FloatTensor grad = net2_.backward(grad_output);
  return net1_.backward(
      relu_.backward(to_device(grad, dev1_, dev0_, "gradient of the activations", transfers_)));
}

std::vector<NamedParameter> ToyMpModel::named_parameters() {
  std::vector<NamedParameter> list;
  for (NamedParameter p : net1_.named_parameters()) list.push_back({"net1." + p.name, p.parameter});
  for (NamedParameter p : net2_.named_parameters()) list.push_back({"net2." + p.name, p.parameter});
  return list;
}

}  // namespace ringlab::training
