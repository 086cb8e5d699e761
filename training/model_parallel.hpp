// Seed 004's ToyMpModel: one model split across two devices of one process.
//
//   class ToyMpModel(nn.Module):               ringlab
//     net1 = Linear(10, 10).to(dev0)           net1 lives on device dev0
//     relu = ReLU()                            (runs where its input is: dev0)
//     net2 = Linear(10, 5).to(dev1)            net2 lives on device dev1
//     forward(x):
//       x = relu(net1(x.to(dev0)))
//       return net2(x.to(dev1))                the activations move dev0 -> dev1
//   loss.backward()                            their gradient moves dev1 -> dev0
//
// ringlab's training library computes on the CPU, so a device here is a
// memory space of this process ("cpu:0", "cpu:1"), where the tutorial has two
// GPUs: a tensor reaches another device only by a copy (.to(device)), and
// every copy is counted, so a lesson can say what crossed between the two.
// Wrapped in DistributedDataParallel it is the tutorial's demo_model_parallel:
// model parallel inside each process, data parallel across processes.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "training/module.hpp"

namespace ringlab::training {

// A memory space of this process standing for one device.
struct Device {
  int index = 0;
  std::string name() const { return "cpu:" + std::to_string(index); }
};

// One copy between devices.
struct Transfer {
  std::string what;  // "activations", "gradient of the activations"
  Device from, to;
  std::size_t bytes = 0;
};

// t.to(to): a copy of t in the memory of device `to`, counted in `log`.
FloatTensor to_device(const FloatTensor& t, const Device& from, const Device& to,
                      const std::string& what, std::vector<Transfer>& log);

class ToyMpModel final : public Module {
 public:
  // dev0 != dev1. Weights and biases are zero until initialized, as
  // ToyModel's (init.hpp, torch_random.hpp: net1 first, then net2).
  ToyMpModel(Device dev0, Device dev1);

  FloatTensor forward(const FloatTensor& input) override;  // output on dev1
  FloatTensor backward(const FloatTensor& grad_output) override;
  std::vector<NamedParameter> named_parameters() override;
  std::string describe() const override { return "ToyMpModel"; }

  Linear& net1() { return net1_; }
  Linear& net2() { return net2_; }
  const Device& dev0() const { return dev0_; }
  const Device& dev1() const { return dev1_; }
  // Every copy between the devices so far, in order.
  const std::vector<Transfer>& transfers() const { return transfers_; }

 private:
  Device dev0_, dev1_;
  Linear net1_;
  ReLU relu_;
  Linear net2_;
  std::vector<Transfer> transfers_;
};

}  // namespace ringlab::training
