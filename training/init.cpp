#include "training/init.hpp"

#include <cmath>
#include <numbers>

namespace ringlab::training {

float Generator::uniform() { return static_cast<float>(engine_() >> 8) * 0x1.0p-24f; }

float Generator::uniform(float low, float high) { return low + (high - low) * uniform(); }

float Generator::normal() {
  const double u1 = uniform();
  const double u2 = uniform();
  return static_cast<float>(std::sqrt(-2.0 * std::log(1.0 - u1)) *
                            std::cos(2.0 * std::numbers::pi * u2));
}

void Generator::fill_uniform(FloatTensor& t, float low, float high) {
  for (float& v : t.values()) v = uniform(low, high);
}

void Generator::fill_normal(FloatTensor& t) {
  for (float& v : t.values()) v = normal();
}

void init_linear(Linear& layer, Generator& g) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(layer.in_features()));
  g.fill_uniform(layer.weight.value, -bound, bound);
  if (layer.has_bias()) g.fill_uniform(layer.bias.value, -bound, bound);
}

void init_toy_model(ToyModel& model, Generator& g) {
  init_linear(model.net1(), g);
  init_linear(model.net2(), g);
}

FloatTensor randn(std::int64_t rows, std::int64_t cols, Generator& g) {
  FloatTensor t = FloatTensor::matrix(rows, cols);
  g.fill_normal(t);
  return t;
}

}  // namespace ringlab::training
