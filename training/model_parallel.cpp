#include "training/model_parallel.hpp"

#include <stdexcept>

namespace ringlab::training {

namespace {
constexpr int kForwardTag = 0;
constexpr int kBackwardTag = 1;
}  // namespace

ToyMpModel::ToyMpModel(ProcessGroup& pg, int dev0, int dev1) : pg_(pg), dev0_(dev0), dev1_(dev1) {
  const auto in_range = [&](int r) { return r >= 0 && r < pg.size(); };
  if (!in_range(dev0) || !in_range(dev1) || dev0 == dev1)
    throw std::invalid_argument("rank " + std::to_string(pg.rank()) +
                                ": ToyMpModel needs two different ranks of the " +
                                std::to_string(pg.size()) + "-rank world for dev0 and dev1, got " +
                                std::to_string(dev0) + " and " + std::to_string(dev1));
  if (pg.rank() == dev0) {
    net1_ = std::make_unique<Linear>(10, 10);
    relu_ = std::make_unique<ReLU>();
  }
  if (pg.rank() == dev1) net2_ = std::make_unique<Linear>(10, 5);
}

Linear& ToyMpModel::net1() {
  if (!net1_)
    throw std::logic_error("rank " + std::to_string(pg_.rank()) + ": net1 lives on rank " +
                           std::to_string(dev0_));
  return *net1_;
}

Linear& ToyMpModel::net2() {
  if (!net2_)
    throw std::logic_error("rank " + std::to_string(pg_.rank()) + ": net2 lives on rank " +
                           std::to_string(dev1_));
  return *net2_;
}

void ToyMpModel::send_matrix(const FloatTensor& m, int dst, int tag) {
  Tensor header = Tensor::of({m.rows(), m.cols()});
  pg_.send(header, dst, tag);
  pg_.send(m.to_tensor(), dst, tag);
}

FloatTensor ToyMpModel::recv_matrix(int src, int tag) {
  Tensor header = Tensor::zeros(2, DType::Int64);
  pg_.recv(header, src, tag);
  const auto shape = header.data<std::int64_t>();
  constexpr std::int64_t kMaxSide = std::int64_t{1} << 24;  // far beyond any ToyMpModel batch
  if (shape[0] < 0 || shape[1] < 0 || shape[0] > kMaxSide || shape[1] > kMaxSide)
    throw std::runtime_error("rank " + std::to_string(pg_.rank()) + ": ToyMpModel: rank " +
                             std::to_string(src) + " announced a [" + std::to_string(shape[0]) +
                             ", " + std::to_string(shape[1]) + "] tensor");
  FloatTensor m = FloatTensor::matrix(shape[0], shape[1]);
  Tensor wire = m.to_tensor();
  pg_.recv(wire, src, tag);
  m.copy_from(wire);
  return m;
}

FloatTensor ToyMpModel::forward(const FloatTensor& input) {
  if (pg_.rank() == dev0_) {
    FloatTensor activations = relu_->forward(net1_->forward(input));
    send_matrix(activations, dev1_, kForwardTag);  // x.to(dev1)
  }
  if (pg_.rank() == dev1_) return net2_->forward(recv_matrix(dev0_, kForwardTag));
  return FloatTensor();
}

FloatTensor ToyMpModel::backward(const FloatTensor& grad_output) {
  if (pg_.rank() == dev1_) send_matrix(net2_->backward(grad_output), dev0_, kBackwardTag);
  if (pg_.rank() == dev0_)
    return net1_->backward(relu_->backward(recv_matrix(dev1_, kBackwardTag)));
  return FloatTensor();
}

std::vector<NamedParameter> ToyMpModel::named_parameters() {
  std::vector<NamedParameter> list;
  if (net1_)
    for (NamedParameter p : net1_->named_parameters())
      list.push_back({"net1." + p.name, p.parameter});
  if (net2_)
    for (NamedParameter p : net2_->named_parameters())
      list.push_back({"net2." + p.name, p.parameter});
  return list;
}

}  // namespace ringlab::training
