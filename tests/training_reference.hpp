// A float64 reference for the ToyModel (Linear(10, 10), ReLU, Linear(10, 5),
// MSELoss mean), written as plain loops independent of training/: the
// expected values of the training tests come from here.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace ringlab::ref {

struct ToyParams {
  // Row-major: w1[i*10 + j] = W1[i][j].
  std::vector<double> w1 = std::vector<double>(100), b1 = std::vector<double>(10),
                      w2 = std::vector<double>(50), b2 = std::vector<double>(5);
};

struct ToyResult {
  double loss = 0;
  ToyParams grad;
};

// rows of x (10 values each) and y (5 values each), in order.
inline ToyResult toy_loss_and_grad(const ToyParams& p, const std::vector<double>& x,
                                   const std::vector<double>& y) {
  const std::size_t batch = x.size() / 10;
  const double elements = static_cast<double>(batch * 5);
  ToyResult r;
  for (std::size_t n = 0; n < batch; ++n) {
    double a[10], h[10], o[5], go[5], gh[10] = {};
    for (int i = 0; i < 10; ++i) {
      a[i] = p.b1[i];
      for (int j = 0; j < 10; ++j) a[i] += p.w1[i * 10 + j] * x[n * 10 + j];
      h[i] = a[i] > 0 ? a[i] : 0;
    }
    for (int m = 0; m < 5; ++m) {
      o[m] = p.b2[m];
      for (int i = 0; i < 10; ++i) o[m] += p.w2[m * 10 + i] * h[i];
      const double d = o[m] - y[n * 5 + m];
      r.loss += d * d / elements;
      go[m] = 2 * d / elements;
    }
    for (int m = 0; m < 5; ++m) {
      r.grad.b2[m] += go[m];
      for (int i = 0; i < 10; ++i) {
        r.grad.w2[m * 10 + i] += go[m] * h[i];
        gh[i] += go[m] * p.w2[m * 10 + i];
      }
    }
    for (int i = 0; i < 10; ++i) {
      const double ga = a[i] > 0 ? gh[i] : 0;
      r.grad.b1[i] += ga;
      for (int j = 0; j < 10; ++j) r.grad.w1[i * 10 + j] += ga * x[n * 10 + j];
    }
  }
  return r;
}

// p -= lr * g, every tensor.
inline void sgd_step(ToyParams& p, const ToyParams& g, double lr) {
  for (std::size_t i = 0; i < 100; ++i) p.w1[i] -= lr * g.w1[i];
  for (std::size_t i = 0; i < 10; ++i) p.b1[i] -= lr * g.b1[i];
  for (std::size_t i = 0; i < 50; ++i) p.w2[i] -= lr * g.w2[i];
  for (std::size_t i = 0; i < 5; ++i) p.b2[i] -= lr * g.b2[i];
}

// |a - b| <= rel * max(|a|, |b|) (+ abs for values that are zero in exact
// arithmetic).
inline bool close(double a, double b, double rel, double abs = 0) {
  return std::fabs(a - b) <= rel * std::fmax(std::fabs(a), std::fabs(b)) + abs;
}

}  // namespace ringlab::ref
