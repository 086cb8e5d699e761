// The training library (training/): layers against a float64 reference,
// SGD against its formula, state dicts and checkpoints (and their errors),
// DistributedDataParallel (the broadcast at construction, the gradient of the
// union batch, no_sync, buckets, real overlap), the Horovod-style optimizer,
// the model-parallel ToyMpModel and the bucketing overlap model. Ranks are
// threads (the inproc transport).
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include "primitives/process_group.hpp"
#include "training/buckets.hpp"
#include "training/checkpoint.hpp"
#include "training/ddp.hpp"
#include "training/format.hpp"
#include "training/horovod.hpp"
#include "training/init.hpp"
#include "training/loss.hpp"
#include "training/model_parallel.hpp"
#include "training_sim/overlap.hpp"
#include "training/sgd.hpp"
#include "training/torch_random.hpp"
#include "training_reference.hpp"
#include "transport/inproc.hpp"
#include "with_groups.hpp"

using namespace ringlab;
using namespace ringlab::training;
using namespace std::chrono_literals;

namespace {

using ringlab::testing::with_groups;

// What every rank threw, by rank ("" where it did not).
struct Errors {
  std::mutex mutex;
  std::vector<std::string> by_rank;
  explicit Errors(int world) : by_rank(static_cast<std::size_t>(world)) {}
  void capture(int rank, const std::function<void()>& fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      std::lock_guard lock(mutex);
      by_rank[static_cast<std::size_t>(rank)] = e.what();
    }
  }
};

std::vector<double> doubles(const FloatTensor& t) { return {t.values().begin(), t.values().end()}; }

ref::ToyParams params_of(ToyModel& m) {
  return {doubles(m.net1().weight.value), doubles(m.net1().bias.value),
          doubles(m.net2().weight.value), doubles(m.net2().bias.value)};
}
ref::ToyParams grads_of(ToyModel& m) {
  return {doubles(m.net1().weight.grad), doubles(m.net1().bias.grad), doubles(m.net2().weight.grad),
          doubles(m.net2().bias.grad)};
}

// A batch of `rows` samples for `rank`: x[k][j] = sin(0.7 (rank*rows + k) + 0.3 j),
// y[k][m] = cos(0.5 (rank*rows + k) - 0.2 m).
struct Batch {
  FloatTensor x, y;
};
Batch batch(int rank, int rows, int salt = 0) {
  Batch b{FloatTensor::matrix(rows, 10), FloatTensor::matrix(rows, 5)};
  for (int k = 0; k < rows; ++k) {
    const double g = rank * rows + k + 100 * salt;
    for (int j = 0; j < 10; ++j) b.x.at(k, j) = static_cast<float>(std::sin(0.7 * g + 0.3 * j));
    for (int m = 0; m < 5; ++m) b.y.at(k, m) = static_cast<float>(std::cos(0.5 * g - 0.2 * m));
  }
  return b;
}

// The union of every rank's batch, as the reference's flat rows.
void append(std::vector<double>& x, std::vector<double>& y, const Batch& b) {
  for (float v : b.x.values()) x.push_back(v);
  for (float v : b.y.values()) y.push_back(v);
}

void check_close(const std::vector<double>& actual, const std::vector<double>& expected, double rel,
                 double abs, const char* what) {
  REQUIRE(actual.size() == expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    INFO(what << "[" << i << "]: " << actual[i] << " vs " << expected[i]);
    CHECK(ref::close(actual[i], expected[i], rel, abs));
  }
}

void check_params_close(const ref::ToyParams& a, const ref::ToyParams& e, double rel, double abs) {
  check_close(a.w1, e.w1, rel, abs, "net1.weight");
  check_close(a.b1, e.b1, rel, abs, "net1.bias");
  check_close(a.w2, e.w2, rel, abs, "net2.weight");
  check_close(a.b2, e.b2, rel, abs, "net2.bias");
}

void init_seeded(ToyModel& model, std::uint32_t seed) {
  Generator g(seed);
  init_toy_model(model, g);
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("ringlab-test-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

}  // namespace

// ---- layers, loss, optimizer ---------------------------------------------------

TEST_SUITE("training_layers") {
  TEST_CASE("ToyModel's forward, loss and backward agree with the float64 reference") {
    ToyModel model;
    init_seeded(model, 3);
    const Batch b = batch(0, 7);
    MSELoss loss_fn;
    const float loss = loss_fn.forward(model.forward(b.x), b.y);
    model.backward(loss_fn.backward());
    std::vector<double> x, y;
    append(x, y, b);
    const ref::ToyResult expected = ref::toy_loss_and_grad(params_of(model), x, y);
    CHECK(ref::close(loss, expected.loss, 1e-6));
    check_params_close(grads_of(model), expected.grad, 1e-5, 1e-7);

    // Gradients accumulate until zero_grad, as in PyTorch.
    loss_fn.forward(model.forward(b.x), b.y);
    model.backward(loss_fn.backward());
    ref::ToyParams twice = expected.grad;
    for (auto* v : {&twice.w1, &twice.b1, &twice.w2, &twice.b2})
      for (double& g : *v) g *= 2;
    check_params_close(grads_of(model), twice, 1e-5, 1e-7);
    model.zero_grad();
    for (float g : model.net1().weight.grad.values()) CHECK(g == 0.0f);
  }

  TEST_CASE("parameters are named as PyTorch names them, and DDP adds module.") {
    ToyModel model;
    std::vector<std::string> names;
    for (const NamedParameter& p : model.named_parameters()) names.push_back(p.name);
    CHECK(names ==
          std::vector<std::string>{"net1.weight", "net1.bias", "net2.weight", "net2.bias"});
    CHECK(model.net1().weight.value.shape_string() == "[10, 10]");
    CHECK(model.net2().weight.value.shape_string() == "[5, 10]");
    CHECK(model.net2().bias.value.shape_string() == "[5]");
    Linear no_bias(1, 1, false);
    CHECK(no_bias.named_parameters().size() == 1);
    with_groups(1, [](ProcessGroup& pg) {
      ToyModel m;
      DistributedDataParallel ddp(m, pg);
      std::vector<std::string> wrapped;
      for (const StateEntry& e : ddp.state_dict()) wrapped.push_back(e.name);
      CHECK(wrapped == std::vector<std::string>{"module.net1.weight", "module.net1.bias",
                                                "module.net2.weight", "module.net2.bias"});
    });
  }

  TEST_CASE("a shape that does not fit gets an error naming both shapes") {
    ToyModel model;
    CHECK_THROWS_WITH_AS(model.forward(FloatTensor::matrix(4, 12)),
                         doctest::Contains("input of shape [4, 12]"), std::invalid_argument);
    MSELoss loss_fn;
    CHECK_THROWS_WITH_AS(loss_fn.forward(FloatTensor::matrix(4, 5), FloatTensor::matrix(4, 6)),
                         doctest::Contains("[4, 5] and the target [4, 6]"), std::invalid_argument);
    CHECK_THROWS_AS(FloatTensor({2, 3, 4}), std::invalid_argument);
  }

  TEST_CASE("MSELoss with reduction sum is seed 002's sum((y - label)**2)") {
    Linear model(1, 1, false);
    model.weight.value[0] = 1;
    FloatTensor x = FloatTensor::matrix(2, 1);
    x[0] = 2;
    x[1] = 3;
    MSELoss loss_fn(Reduction::Sum);
    CHECK(loss_fn.forward(model.forward(x), FloatTensor::matrix(2, 1)) == 13.0f);
    model.backward(loss_fn.backward());
    CHECK(model.weight.grad[0] == 26.0f);  // sum of 2 w x^2
  }

  TEST_CASE("SGD follows PyTorch's formula: weight decay, momentum, dampening, nesterov") {
    for (const bool nesterov : {false, true}) {
      CAPTURE(nesterov);
      const SgdOptions o{.lr = 0.1,
                         .momentum = 0.9,
                         .dampening = nesterov ? 0.0 : 0.25,
                         .weight_decay = 0.01,
                         .nesterov = nesterov};
      Parameter p(FloatTensor::vector(2));
      p.value[0] = 1.0f;
      p.value[1] = -2.0f;
      SGD sgd({&p}, o);
      double value[2] = {1.0, -2.0}, buf[2] = {0, 0};
      for (int step = 0; step < 4; ++step) {
        const double g[2] = {0.5 - step, 0.25 * step};
        p.grad[0] = static_cast<float>(g[0]);
        p.grad[1] = static_cast<float>(g[1]);
        sgd.step();
        for (int i = 0; i < 2; ++i) {
          double d = g[i] + o.weight_decay * value[i];
          buf[i] = step == 0 ? d : o.momentum * buf[i] + (1 - o.dampening) * d;
          d = o.nesterov ? d + o.momentum * buf[i] : buf[i];
          value[i] -= o.lr * d;
          CHECK(ref::close(p.value[static_cast<std::size_t>(i)], value[i], 1e-6));
        }
      }
      const OptimizerState state = sgd.state_dict();
      REQUIRE(state.momentum_buffers[0].has_value());
      CHECK(ref::close((*state.momentum_buffers[0])[1], buf[1], 1e-6));
    }
    Parameter p(FloatTensor::vector(1));
    CHECK_THROWS_WITH_AS(SGD({&p}, {.lr = -1}), doctest::Contains("invalid learning rate"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(SGD({&p}, {.lr = 0.1, .nesterov = true}),
                         doctest::Contains("Nesterov momentum requires a momentum"),
                         std::invalid_argument);
  }

  TEST_CASE("python_float prints as Python's repr") {
    // Expected strings from Python 3's repr of the same doubles.
    CHECK(python_float(14.0) == "14.0");
    CHECK(python_float(0.0) == "0.0");
    CHECK(python_float(-0.0) == "-0.0");
    CHECK(python_float(1e-05) == "1e-05");
    CHECK(python_float(0.0001) == "0.0001");
    CHECK(python_float(1e16) == "1e+16");
    CHECK(python_float(1e15) == "1000000000000000.0");
    CHECK(python_float(0.1) == "0.1");
    CHECK(python_float(1.2345678901234568e17) == "1.2345678901234568e+17");
    CHECK(python_float(2.5e-07) == "2.5e-07");
    CHECK(python_float(-7.0) == "-7.0");
    CHECK(python_float(static_cast<float>(0.01)) == "0.009999999776482582");
    CHECK(significant(0.08635410672, 9) == "0.0863541067");
  }

}  // TEST_SUITE

// ---- state dicts and checkpoints ----------------------------------------------

TEST_SUITE("training_checkpoint") {
  TEST_CASE("load_state_dict names what is missing, unexpected or of the wrong shape") {
    ToyModel model;
    StateDict state = model.state_dict();
    state.erase(state.begin() + 1);                            // no net1.bias
    state.push_back({"net3.weight", FloatTensor::vector(2)});  // one too many
    state[0].value = FloatTensor::matrix(10, 12);              // net1.weight's shape
    try {
      model.load_state_dict(state);
      FAIL("no error");
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      CHECK(what.find("Error(s) in loading state_dict for ToyModel") != std::string::npos);
      CHECK(what.find("Missing key(s) in state_dict: \"net1.bias\"") != std::string::npos);
      CHECK(what.find("Unexpected key(s) in state_dict: \"net3.weight\"") != std::string::npos);
      CHECK(what.find("size mismatch for net1.weight: copying a param with shape [10, 12] from "
                      "checkpoint, the shape in current model is [10, 10]") != std::string::npos);
    }
    // Nothing was copied.
    for (float v : model.net1().weight.value.values()) CHECK(v == 0.0f);
  }

  TEST_CASE("a DDP state dict loaded into the bare model (or back) says what to do") {
    with_groups(1, [](ProcessGroup& pg) {
      ToyModel model, other;
      DistributedDataParallel ddp(model, pg);
      CHECK_THROWS_WITH_AS(other.load_state_dict(ddp.state_dict()),
                           doctest::Contains("saved from a DistributedDataParallel model"),
                           std::invalid_argument);
      CHECK_THROWS_WITH_AS(ddp.load_state_dict(other.state_dict()),
                           doctest::Contains("expects keys starting with \"module.\""),
                           std::invalid_argument);
    });
  }

  TEST_CASE("a checkpoint round-trips every float32, the optimizer state and the epoch") {
    ToyModel model;
    init_seeded(model, 11);
    model.net1().weight.value[3] = 1e-38f;  // a subnormal-adjacent value survives too
    model.net2().bias.value[0] = -0.0f;
    SGD sgd(model.parameters(), {.lr = 0.05, .momentum = 0.9, .weight_decay = 1e-4});
    const Batch b = batch(1, 4);
    MSELoss loss_fn;
    loss_fn.forward(model.forward(b.x), b.y);
    model.backward(loss_fn.backward());
    sgd.step();
    const std::string path = temp_path("roundtrip.json");
    save_checkpoint({.model = model.state_dict(), .optimizer = sgd.state_dict(), .epoch = 35},
                    path);
    CHECK(read_file(path).starts_with(R"({"format":"ringlab-checkpoint","version":1)"));
    const Checkpoint c = load_checkpoint(path);
    REQUIRE(c.epoch.has_value());
    CHECK(*c.epoch == 35);
    const StateDict original = model.state_dict();
    REQUIRE(c.model.size() == original.size());
    for (std::size_t k = 0; k < original.size(); ++k) {
      CHECK(c.model[k].name == original[k].name);
      CHECK(c.model[k].value.shape() == original[k].value.shape());
      for (std::size_t i = 0; i < original[k].value.numel(); ++i)
        CHECK(std::bit_cast<std::uint32_t>(c.model[k].value[i]) ==
              std::bit_cast<std::uint32_t>(original[k].value[i]));
    }
    REQUIRE(c.optimizer.has_value());
    CHECK(c.optimizer->options.lr == 0.05);
    CHECK(c.optimizer->options.momentum == 0.9);
    CHECK(c.optimizer->options.weight_decay == 1e-4);
    const OptimizerState state = sgd.state_dict();
    for (std::size_t k = 0; k < state.momentum_buffers.size(); ++k) {
      REQUIRE(c.optimizer->momentum_buffers[k].has_value());
      for (std::size_t i = 0; i < state.momentum_buffers[k]->numel(); ++i)
        CHECK((*c.optimizer->momentum_buffers[k])[i] == (*state.momentum_buffers[k])[i]);
    }
    // Loading it into a fresh model and optimizer gives the same next step.
    ToyModel restored;
    restored.load_state_dict(c.model);
    SGD restored_sgd(restored.parameters(), {.lr = 1});
    restored_sgd.load_state_dict(*c.optimizer);
    for (ToyModel* m : {&model, &restored}) {
      m->zero_grad();
      loss_fn.forward(m->forward(b.x), b.y);
      m->backward(loss_fn.backward());
    }
    sgd.step();
    restored_sgd.step();
    for (std::size_t i = 0; i < 100; ++i)
      CHECK(restored.net1().weight.value[i] == model.net1().weight.value[i]);
    std::filesystem::remove(path);
  }

  TEST_CASE("a truncated, foreign, empty, missing or newer checkpoint gets a clear error") {
    ToyModel model;
    init_seeded(model, 5);
    const std::string path = temp_path("errors.json");
    save_checkpoint({.model = model.state_dict()}, path);
    const std::string whole = read_file(path);
    const std::string cut = temp_path("cut.json");
    for (std::size_t length :
         {std::size_t{1}, std::size_t{10}, whole.size() / 2, whole.size() - 3}) {
      CAPTURE(length);
      write_file(cut, whole.substr(0, length));
      try {
        load_checkpoint(cut);
        FAIL("no error");
      } catch (const CheckpointError& e) {
        const std::string what = e.what();
        CHECK((what.find("truncated") != std::string::npos ||
               what.find("cut off after") != std::string::npos));
        CHECK(what.find(cut) != std::string::npos);
      }
    }
    using namespace std::string_literals;  // a zip header, as torch.save writes one
    write_file(cut, "PK\x03\x04" "archive/data.pkl"s);
    CHECK_THROWS_WITH_AS(load_checkpoint(cut), doctest::Contains("as torch.save writes"),
                         CheckpointError);
    write_file(cut, "hello");
    CHECK_THROWS_WITH_AS(load_checkpoint(cut), doctest::Contains("is not a ringlab checkpoint"),
                         CheckpointError);
    write_file(cut, "");
    CHECK_THROWS_WITH_AS(load_checkpoint(cut), doctest::Contains("is empty"), CheckpointError);
    std::string newer = whole;
    newer.replace(newer.find("\"version\":1"), 11, "\"version\":2");
    write_file(cut, newer);
    CHECK_THROWS_WITH_AS(load_checkpoint(cut), doctest::Contains("has format version 2"),
                         CheckpointError);
    std::string damaged = whole;
    damaged.replace(damaged.find("\"shape\":[10,10]"), 15, "\"shape\":[10,11]");
    write_file(cut, damaged);
    CHECK_THROWS_WITH_AS(load_checkpoint(cut),
                         doctest::Contains("has shape [10, 11] (110 values) but 100 values"),
                         CheckpointError);
    CHECK_THROWS_WITH_AS(load_checkpoint(temp_path("no-such-file.json")),
                         doctest::Contains("No such file"), CheckpointError);
    std::filesystem::remove(cut);
    std::filesystem::remove(path);
  }

  TEST_CASE("a checkpoint of another model is refused by load_state_dict, naming the keys") {
    Linear other(10, 3);
    const std::string path = temp_path("other.json");
    save_checkpoint({.model = other.state_dict()}, path);
    ToyModel model;
    CHECK_THROWS_WITH_AS(model.load_state_dict(load_checkpoint(path).model),
                         doctest::Contains("Missing key(s) in state_dict: \"net1.weight\""),
                         std::invalid_argument);
    std::filesystem::remove(path);
  }

  TEST_CASE("saving is atomic: a writer killed at any moment leaves the old or the new file") {
    // A child process saves checkpoints of a large state over and over (each
    // one's values all equal its version number); it is killed at a random
    // moment, and the file must then load completely with one version.
    const std::string path = temp_path("atomic.json");
    const auto state_of = [](int version) {
      FloatTensor t = FloatTensor::vector(200000);
      t.fill(static_cast<float>(version) + 0.123456789f);
      return StateDict{{"w", t}};
    };
    save_checkpoint({.model = state_of(0)}, path);
    std::mt19937 random(12345);
    for (int round = 0; round < 6; ++round) {
      const pid_t child = ::fork();
      REQUIRE(child >= 0);
      if (child == 0) {
        for (int version = 1;; ++version) save_checkpoint({.model = state_of(version)}, path);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20 + random() % 120));
      ::kill(child, SIGKILL);
      int status = 0;
      ::waitpid(child, &status, 0);
      const Checkpoint c = load_checkpoint(path);
      REQUIRE(c.model.size() == 1);
      const auto values = c.model[0].value.values();
      CHECK(std::all_of(values.begin(), values.end(), [&](float v) { return v == values[0]; }));
    }
    // The killed writers' temporary files are the only leftovers; none is the
    // checkpoint itself.
    for (const auto& entry :
         std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
      if (entry.path().filename().string().starts_with(
              "." + std::filesystem::path(path).filename().string() + ".tmp-"))
        std::filesystem::remove(entry.path());
    std::filesystem::remove(path);
  }

  TEST_CASE("saving into a folder that does not exist fails and names it") {
    CHECK_THROWS_WITH_AS(save_checkpoint({}, temp_path("no-such-folder") + "/c.json"),
                         doctest::Contains("no-such-folder' does not exist"), CheckpointError);
  }

}  // TEST_SUITE

// ---- DistributedDataParallel -----------------------------------------------------

TEST_SUITE("training_ddp") {
  TEST_CASE("buckets follow PyTorch's assignment") {
    // torch 1.13: dist._compute_bucket_assignment_by_size(tensors of 400, 1200,
    // 200, 200, 1600, 40 bytes, [500, 1000]) == [[0, 1], [2, 3, 4], [5]];
    // with limit [0], one tensor per bucket.
    const std::vector<std::size_t> bytes{400, 1200, 200, 200, 1600, 40};
    CHECK(assign_buckets(bytes, 500, 1000) ==
          std::vector<std::vector<std::size_t>>{{0, 1}, {2, 3, 4}, {5}});
    CHECK(assign_buckets(bytes, 0, 0).size() == 6);
    CHECK(assign_buckets(bytes, 1 << 20, 25 << 20).size() == 1);
  }

  TEST_CASE("DDP's constructor broadcasts rank 0's parameters") {
    with_groups(3, [](ProcessGroup& pg) {
      ToyModel model, rank0;
      init_seeded(model, 100 + static_cast<std::uint32_t>(pg.rank()));
      init_seeded(rank0, 100);
      DistributedDataParallel ddp(model, pg);
      for (std::size_t i = 0; i < 100; ++i)
        CHECK(model.net1().weight.value[i] == rank0.net1().weight.value[i]);
      for (std::size_t i = 0; i < 5; ++i)
        CHECK(model.net2().bias.value[i] == rank0.net2().bias.value[i]);
    });
  }

  TEST_CASE("DDP's constructor broadcasts buffers too") {
    // A layer with a running statistic, as BatchNorm keeps one.
    struct WithBuffer final : Module {
      Linear fc{2, 2};
      FloatTensor running = FloatTensor::vector(3);
      FloatTensor forward(const FloatTensor& x) override { return fc.forward(x); }
      FloatTensor backward(const FloatTensor& g) override { return fc.backward(g); }
      std::vector<NamedParameter> named_parameters() override { return fc.named_parameters(); }
      std::vector<NamedBuffer> named_buffers() override { return {{"running", &running}}; }
      std::string describe() const override { return "WithBuffer"; }
    };
    with_groups(3, [](ProcessGroup& pg) {
      WithBuffer model;
      model.running.fill(static_cast<float>(10 + pg.rank()));
      DistributedDataParallel ddp(model, pg);
      for (float v : model.running.values()) CHECK(v == 10.0f);
      CHECK(ddp.state_dict().back().name == "module.running");
    });
  }

  TEST_CASE("models that differ between ranks fail on every rank, naming the parameter") {
    Errors errors(2);
    with_groups(2, [&](ProcessGroup& pg) {
      errors.capture(pg.rank(), [&] {
        Sequential model("Net");
        model.add("fc", std::make_unique<Linear>(10, pg.rank() == 1 ? 12 : 10));
        DistributedDataParallel ddp(model, pg);
      });
    });
    for (const std::string& e : errors.by_rank) {
      CHECK(e.find("the ranks' models differ: fc.weight has shape [12, 10] on rank 1 and [10, 10] "
                   "on rank 0") != std::string::npos);
    }
    Errors count_errors(2);
    with_groups(2, [&](ProcessGroup& pg) {
      count_errors.capture(pg.rank(), [&] {
        Linear model(3, 3, /*bias=*/pg.rank() == 0);
        DistributedDataParallel ddp(model, pg);
      });
    });
    for (const std::string& e : count_errors.by_rank)
      CHECK(e.find("rank 1's has 1 parameters and buffers, rank 0's has 2") != std::string::npos);
  }

  TEST_CASE("the DDP gradient is the gradient of the union batch") {
    for (const int world : {1, 2, 3, 4}) {
      for (const double cap_mb : {25.0, 0.0001, 0.0}) {
        CAPTURE(world);
        CAPTURE(cap_mb);
        std::vector<double> x, y;
        for (int r = 0; r < world; ++r) append(x, y, batch(r, 5));
        ToyModel start;
        init_seeded(start, 200);  // rank 0's init, which DDP broadcasts
        const ref::ToyResult expected = ref::toy_loss_and_grad(params_of(start), x, y);
        std::mutex mutex;
        std::vector<ref::ToyParams> after_step(static_cast<std::size_t>(world));
        with_groups(world, [&](ProcessGroup& pg) {
          ToyModel model;
          init_seeded(model, 200 + static_cast<std::uint32_t>(pg.rank()));
          DistributedDataParallel ddp(model, pg, {.bucket_cap_mb = cap_mb});
          const Batch b = batch(pg.rank(), 5);
          MSELoss loss_fn;
          SGD sgd(ddp.parameters(), {.lr = 0.1});
          sgd.zero_grad();
          loss_fn.forward(ddp(b.x), b.y);
          ddp.backward(loss_fn.backward());
          const ref::ToyParams grads = grads_of(model);
          sgd.step();
          std::lock_guard lock(mutex);
          check_params_close(grads, expected.grad, 1e-5, 1e-7);
          after_step[static_cast<std::size_t>(pg.rank())] = params_of(model);
        });
        // Every rank made the very same update.
        for (int r = 1; r < world; ++r) {
          CHECK(after_step[static_cast<std::size_t>(r)].w1 == after_step[0].w1);
          CHECK(after_step[static_cast<std::size_t>(r)].b2 == after_step[0].b2);
        }
      }
    }
  }

  TEST_CASE("buckets start in order, each after its gradients, and are averaged at the end") {
    with_groups(2, [](ProcessGroup& pg) {
      ToyModel model;
      DistributedDataParallel ddp(model, pg, {.bucket_cap_mb = 0.0002});  // 209 bytes
      // Reverse parameter order: net2.bias (20 B) + net2.weight (200 B) fill
      // bucket 0; net1.bias (40 B) + net1.weight (400 B) bucket 1.
      REQUIRE(ddp.buckets().size() == 2);
      CHECK(ddp.buckets()[0].parameters == std::vector<int>{3, 2});
      CHECK(ddp.buckets()[1].parameters == std::vector<int>{1, 0});
      const Batch b = batch(pg.rank(), 3);
      MSELoss loss_fn;
      loss_fn.forward(ddp(b.x), b.y);
      ddp.backward(loss_fn.backward());
      const auto& events = ddp.events();
      const auto position = [&](DdpEvent::Kind kind, int bucket, int parameter = -1) {
        for (std::size_t i = 0; i < events.size(); ++i)
          if (events[i].kind == kind && events[i].bucket == bucket &&
              (parameter < 0 || events[i].parameter == parameter))
            return static_cast<int>(i);
        return -1;
      };
      using K = DdpEvent::Kind;
      const int started0 = position(K::AllReduceStarted, 0),
                started1 = position(K::AllReduceStarted, 1);
      REQUIRE(started0 >= 0);
      REQUIRE(started1 >= 0);
      CHECK(position(K::GradientReady, 0, 3) < started0);
      CHECK(position(K::GradientReady, 0, 2) < started0);
      CHECK(started0 < position(K::GradientReady, 1, 1));  // before backward reached net1
      CHECK(position(K::GradientReady, 1, 0) < started1);
      for (int bucket : {0, 1})
        CHECK(position(K::AllReduceDone, bucket) < position(K::Averaged, bucket));
      CHECK(position(K::Averaged, 1) == static_cast<int>(events.size()) - 1);
    });
  }

  TEST_CASE("overlap is real: bucket 0's all_reduce completes before the last gradient exists") {
    // One bucket per parameter. Just before net1.weight's gradient (the last
    // one backward produces) is computed, net1.bias's hook waits for bucket 0
    // (net2.bias) to finish. If DDP started communicating only after
    // backward, that all_reduce could never finish there and the wait would
    // give up after 5 s.
    std::mutex mutex;
    std::vector<bool> completed_early;
    with_groups(2, [&](ProcessGroup& pg) {
      ToyModel model;
      DistributedDataParallel ddp(model, pg, {.bucket_cap_mb = 0});
      REQUIRE(ddp.buckets().size() == 4);
      bool completed = false;
      bool net1_weight_ready = false;
      ddp.set_observer([&](const DdpEvent& e) {
        if (e.kind == DdpEvent::Kind::GradientReady && e.name == "net1.weight")
          net1_weight_ready = true;
      });
      model.net1().bias.add_grad_hook([&](Parameter&) {
        const auto deadline = std::chrono::steady_clock::now() + 5s;
        while (!ddp.bucket_completed(0) && std::chrono::steady_clock::now() < deadline)
          std::this_thread::sleep_for(1ms);
        completed = ddp.bucket_completed(0) && !net1_weight_ready;
      });
      const Batch b = batch(pg.rank(), 3);
      MSELoss loss_fn;
      loss_fn.forward(ddp(b.x), b.y);
      ddp.backward(loss_fn.backward());
      std::lock_guard lock(mutex);
      completed_early.push_back(completed);
      // The log says so too: bucket 0 started before net1.weight was ready.
      int started = -1, last_gradient = -1;
      for (std::size_t i = 0; i < ddp.events().size(); ++i) {
        const DdpEvent& e = ddp.events()[i];
        if (e.kind == DdpEvent::Kind::AllReduceStarted && e.bucket == 0 && started < 0)
          started = static_cast<int>(i);
        if (e.kind == DdpEvent::Kind::GradientReady && e.name == "net1.weight")
          last_gradient = static_cast<int>(i);
      }
      CHECK(started >= 0);
      CHECK(started < last_gradient);
    });
    CHECK(completed_early == std::vector<bool>{true, true});
  }

  TEST_CASE("no_sync accumulates locally; the next synchronized backward averages the sum") {
    with_groups(2, [](ProcessGroup& pg) {
      ToyModel model;
      init_seeded(model, 300);
      DistributedDataParallel ddp(model, pg, {.bucket_cap_mb = 0.0001});
      MSELoss loss_fn;
      const Batch first = batch(pg.rank(), 4, 1), second = batch(pg.rank(), 4, 2);
      {
        auto guard = ddp.no_sync();
        loss_fn.forward(ddp(first.x), first.y);
        ddp.backward(loss_fn.backward());
      }
      CHECK(ddp.events().empty());  // no communication at all
      std::vector<double> x, y;
      append(x, y, first);
      check_params_close(grads_of(model), ref::toy_loss_and_grad(params_of(model), x, y).grad, 1e-5,
                         1e-7);

      loss_fn.forward(ddp(second.x), second.y);
      ddp.backward(loss_fn.backward());
      // (sum over ranks of (first_r + second_r)) / 2
      ref::ToyParams expected;
      for (int r = 0; r < 2; ++r)
        for (int salt : {1, 2}) {
          std::vector<double> bx, by;
          append(bx, by, batch(r, 4, salt));
          const ref::ToyParams g = ref::toy_loss_and_grad(params_of(model), bx, by).grad;
          for (std::size_t i = 0; i < 100; ++i) expected.w1[i] += g.w1[i] / 2;
          for (std::size_t i = 0; i < 10; ++i) expected.b1[i] += g.b1[i] / 2;
          for (std::size_t i = 0; i < 50; ++i) expected.w2[i] += g.w2[i] / 2;
          for (std::size_t i = 0; i < 5; ++i) expected.b2[i] += g.b2[i] / 2;
        }
      check_params_close(grads_of(model), expected, 1e-5, 1e-7);
    });
  }

  TEST_CASE("backward without forward is an error, not a hang") {
    with_groups(1, [](ProcessGroup& pg) {
      ToyModel model;
      DistributedDataParallel ddp(model, pg);
      CHECK_THROWS_WITH_AS(ddp.backward(FloatTensor::matrix(2, 5)),
                           doctest::Contains("backward without a forward"), std::logic_error);
    });
  }

}  // TEST_SUITE

// ---- Horovod-style optimizer --------------------------------------------------

TEST_SUITE("training_horovod") {
  TEST_CASE("DistributedOptimizer averages like the union batch, through the fusion buffer") {
    const int world = 3;
    std::vector<double> x, y;
    for (int r = 0; r < world; ++r) append(x, y, batch(r, 4));
    ToyModel start;
    init_seeded(start, 400);
    const ref::ToyResult expected = ref::toy_loss_and_grad(params_of(start), x, y);
    std::mutex mutex;
    with_groups(world, [&](ProcessGroup& pg) {
      hvd::Horovod hvd = hvd::init(pg);
      CHECK(hvd.rank() == pg.rank());
      CHECK(hvd.size() == world);
      CHECK(hvd.local_rank() == pg.rank());  // inproc: one host
      ToyModel model;
      init_seeded(model, 400 + static_cast<std::uint32_t>(hvd.rank()));
      SGD sgd(model.parameters(), {.lr = 0.01 * hvd.size()});
      // 500 bytes: net2.bias + net2.weight + net1.bias (260 B) fit; net1.weight
      // (400 B) does not, so it opens a second buffer.
      hvd::DistributedOptimizer optimizer(hvd, sgd, model.named_parameters(),
                                          {.fusion_threshold_bytes = 500});
      hvd::broadcast_parameters(hvd, model, 0);
      const Batch b = batch(hvd.rank(), 4);
      MSELoss loss_fn;
      optimizer.zero_grad();
      loss_fn.forward(model.forward(b.x), b.y);
      model.backward(loss_fn.backward());
      CHECK_THROWS_WITH_AS(optimizer.zero_grad(), doctest::Contains("race condition"),
                           std::logic_error);
      optimizer.synchronize();
      std::lock_guard lock(mutex);
      check_params_close(grads_of(model), expected.grad, 1e-5, 1e-7);
      REQUIRE(optimizer.fusions().size() == 2);
      CHECK(optimizer.fusions()[0].tensors ==
            std::vector<std::string>{"net2.bias", "net2.weight", "net1.bias"});
      CHECK(optimizer.fusions()[0].bytes == 260);
      CHECK(optimizer.fusions()[1].tensors == std::vector<std::string>{"net1.weight"});
    });
  }

  TEST_CASE("broadcast_optimizer_state gives every rank the root's settings and momentum") {
    with_groups(3, [](ProcessGroup& pg) {
      hvd::Horovod hvd = hvd::init(pg);
      Linear model(2, 2);
      model.weight.value.fill(1.0f);
      SGD sgd(model.parameters(),
              {.lr = 0.1 * (hvd.rank() + 1), .momentum = hvd.rank() == 0 ? 0.9 : 0.5});
      if (hvd.rank() == 0) {  // only the root has momentum buffers
        model.weight.grad.fill(2.0f);
        model.bias.grad.fill(3.0f);
        sgd.step();
      }
      hvd::broadcast_optimizer_state(hvd, sgd, 0);
      const OptimizerState state = sgd.state_dict();
      CHECK(state.options.lr == doctest::Approx(0.1));
      CHECK(state.options.momentum == doctest::Approx(0.9));
      REQUIRE(state.momentum_buffers[0].has_value());
      CHECK((*state.momentum_buffers[0])[0] == 2.0f);
      CHECK((*state.momentum_buffers[1])[1] == 3.0f);
      CHECK_THROWS_WITH_AS(hvd::broadcast_parameters(hvd, model, 7),
                           doctest::Contains("root_rank 7 is out of range"), std::invalid_argument);
    });
  }

}  // TEST_SUITE

// ---- model parallelism -----------------------------------------------------------

TEST_SUITE("training_model_parallel") {
  // Printed by PyTorch 1.13 (Debian's python3-torch, AVX2 kernels) for
  //   torch.manual_seed(42); net1 = nn.Linear(10, 10); net2 = nn.Linear(10, 5)
  //   x = torch.randn(20, 10); y = torch.randn(20, 5)
  // with "%.9g" % v: the first four values of each, and x's last 20 (which
  // torch.randn draws twice: 200 is not a multiple of 16).
  TEST_CASE("TorchGenerator draws PyTorch's numbers") {
    const auto text = [](std::span<const float> values, std::size_t from, std::size_t n) {
      std::string out;
      for (std::size_t i = from; i < from + n; ++i) out += (i > from ? " " : "") + significant(values[i]);
      return out;
    };
    TorchGenerator torch(42);
    ToyModel model;
    torch_init_toy_model(model, torch);
    CHECK(text(model.net1().weight.value.values(), 0, 4) ==
          "0.241768315 0.262471557 -0.0740834624 0.290490389");
    CHECK(text(model.net1().bias.value.values(), 0, 4) ==
          "-0.181094229 0.0789948553 -0.0417399071 -0.229545295");
    CHECK(text(model.net2().weight.value.values(), 0, 4) ==
          "0.316104084 0.0597275048 0.0974486545 -0.29494068");
    const FloatTensor x = torch.randn(20, 10);
    const FloatTensor y = torch.randn(20, 5);
    CHECK(text(x.values(), 0, 4) == "-0.730842412 0.174820259 -1.09392929 0.963338673");
    CHECK(text(x.values(), 180, 20) ==
          "0.129219756 2.85197473 -0.743569314 0.195371285 -1.26093471 0.916515291 "
          "-0.0280060954 -0.218443215 0.16629982 2.14416814 1.70456719 0.345901251 0.544755042 "
          "0.993460238 0.50667119 -0.13968797 -1.18075025 -1.28292954 0.448485792 -0.590737522");
    CHECK(text(y.values(), 0, 4) == "-0.437465847 -1.22011125 -0.585415184 0.666373789");
  }

  TEST_CASE("ToyMpModel gives the one-device loss and update, copying 800 bytes each way") {
    TorchGenerator torch(42);
    ToyMpModel model(Device{0}, Device{1});
    torch_init_toy_model_parallel(model, torch);
    const FloatTensor x = torch.randn(20, 10), y = torch.randn(20, 5);
    const ref::ToyParams start{doubles(model.net1().weight.value), doubles(model.net1().bias.value),
                               doubles(model.net2().weight.value), doubles(model.net2().bias.value)};
    const ref::ToyResult expected = ref::toy_loss_and_grad(start, doubles(x), doubles(y));
    ref::ToyParams after = start;
    ref::sgd_step(after, expected.grad, 0.05);
    SGD sgd(model.parameters(), SgdOptions{.lr = 0.05});
    MSELoss loss_fn;
    CHECK(ref::close(loss_fn.forward(model.forward(x), y), expected.loss, 1e-6));
    model.backward(loss_fn.backward());
    sgd.step();
    check_close(doubles(model.net1().weight.value), after.w1, 1e-6, 1e-8, "net1.weight");
    check_close(doubles(model.net1().bias.value), after.b1, 1e-6, 1e-8, "net1.bias");
    check_close(doubles(model.net2().weight.value), after.w2, 1e-6, 1e-8, "net2.weight");
    check_close(doubles(model.net2().bias.value), after.b2, 1e-6, 1e-8, "net2.bias");
    // The activations (20 x 10 float32) forward, their gradient back.
    REQUIRE(model.transfers().size() == 2);
    CHECK(model.transfers()[0].what == "activations");
    CHECK(model.transfers()[0].from.name() == "cpu:0");
    CHECK(model.transfers()[0].to.name() == "cpu:1");
    CHECK(model.transfers()[0].bytes == 800);
    CHECK(model.transfers()[1].what == "gradient of the activations");
    CHECK(model.transfers()[1].from.name() == "cpu:1");
    CHECK(model.transfers()[1].bytes == 800);
  }

  TEST_CASE("ToyMpModel refuses one device for both halves") {
    CHECK_THROWS_WITH_AS(ToyMpModel(Device{1}, Device{1}), doctest::Contains("give two devices"),
                         std::invalid_argument);
  }

}  // TEST_SUITE

// ---- how much communication hides behind backward ------------------------------

TEST_SUITE("training_overlap") {
  TEST_CASE("one bucket hides nothing; k quick buckets hide all but the last") {
    const AllReduceCost constant = [](std::size_t) { return 0.001; };
    // 4 layers of 1 MiB, buckets of 1 MiB: the first bucket's limit is also 1 MiB.
    OverlapScenario s{.parameters = 4 << 18,
                      .layers = 4,
                      .bucket_cap_mb = 1,
                      .first_bucket_bytes = 1 << 20,
                      .backward_s = 0.1};
    OverlapReport r = simulate_overlap(s, constant);
    REQUIRE(r.buckets.size() == 4);
    for (std::size_t b = 0; b < 4; ++b) {
      CHECK(r.buckets[b].ready_s == doctest::Approx(0.025 * static_cast<double>(b + 1)));
      CHECK(r.buckets[b].start_s == doctest::Approx(r.buckets[b].ready_s));
    }
    CHECK(r.communication_s == doctest::Approx(0.004));
    CHECK(r.exposed_s() == doctest::Approx(0.001));
    CHECK(r.hidden_fraction() == doctest::Approx(0.75));  // (k - 1) / k

    s.bucket_cap_mb = 100;
    s.first_bucket_bytes = 100 << 20;
    r = simulate_overlap(s, constant);
    REQUIRE(r.buckets.size() == 1);
    CHECK(r.hidden_s() == doctest::Approx(0.0));
    CHECK(r.finish_s == doctest::Approx(0.101));

    // Slow all_reduces queue up behind each other: finish = ready_0 + k * c.
    s.bucket_cap_mb = 1;
    s.first_bucket_bytes = 1 << 20;
    r = simulate_overlap(s, [](std::size_t) { return 0.05; });
    CHECK(r.finish_s == doctest::Approx(0.025 + 4 * 0.05));
    CHECK(r.hidden_s() == doctest::Approx(0.2 - (0.225 - 0.1)));
    CHECK_THROWS_AS(simulate_overlap({.parameters = 0}, constant), std::invalid_argument);
  }

  TEST_CASE("the all_reduce cost comes from the simulator: the ring's closed form") {
    sim::CostModel model;
    model.alpha_s = 10e-6;
    model.bandwidth_Bps = 1e9;
    const int P = 4;
    const std::size_t n = 4 << 20;
    const AllReduceCost cost = simulated_all_reduce_cost(P, "ring", model);
    const double closed = 2.0 * (P - 1) * model.alpha_s +
                          2.0 * (P - 1) / P * static_cast<double>(n) / model.bandwidth_Bps;
    CHECK(cost(n) == doctest::Approx(closed).epsilon(1e-9));
  }

}  // TEST_SUITE
