// Seed 004's ToyMpModel, with the two "devices" as two ranks:
//
//   class ToyMpModel(nn.Module):               ringlab
//     net1 = Linear(10, 10).to(dev0)           net1 lives on rank dev0
//     relu = ReLU()                            so does the ReLU
//     net2 = Linear(10, 5).to(dev1)            net2 lives on rank dev1
//     forward(x):
//       x = relu(net1(x.to(dev0)))             rank dev0 computes the activations
//       return net2(x.to(dev1))                ... and sends them to dev1 (send/recv)
//   loss.backward()                            dev1 sends d loss / d activations
//                                              back to dev0, which finishes
//
// Every rank calls forward and backward (the other ranks do nothing);
// forward returns the output on dev1 and an empty tensor elsewhere; backward
// takes the loss gradient on dev1 (ignored elsewhere). Each rank holds, and
// its optimizer updates, only its own layers: state_dict() on dev0 has
// net1.weight and net1.bias, on dev1 net2.weight and net2.bias.
//
// On the wire: a 2-element int64 shape header, then the float32 values, with
// tag 0 going forward (activations) and tag 1 coming back (their gradient).
#pragma once

#include <memory>

#include "primitives/process_group.hpp"
#include "training/module.hpp"

namespace ringlab::training {

class ToyMpModel final : public Module {
 public:
  // dev0 != dev1, both ranks of pg.
  ToyMpModel(ProcessGroup& pg, int dev0 = 0, int dev1 = 1);

  FloatTensor forward(const FloatTensor& input) override;
  FloatTensor backward(const FloatTensor& grad_output) override;
  std::vector<NamedParameter> named_parameters() override;
  std::string describe() const override { return "ToyMpModel"; }

  bool holds_net1() const { return net1_ != nullptr; }
  bool holds_net2() const { return net2_ != nullptr; }
  Linear& net1();  // rank dev0 only
  Linear& net2();  // rank dev1 only

 private:
  void send_matrix(const FloatTensor& m, int dst, int tag);
  FloatTensor recv_matrix(int src, int tag);

  ProcessGroup& pg_;
  int dev0_, dev1_;
  std::unique_ptr<Linear> net1_;
  std::unique_ptr<ReLU> relu_;
  std::unique_ptr<Linear> net2_;
};

}  // namespace ringlab::training
