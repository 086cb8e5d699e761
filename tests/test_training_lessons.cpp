// The training lessons (seeds 002-004) as `ringlab lesson NAME` prints them,
// over TCP processes (the default) and threads (--backend inproc), against
// independent references: the article's lines and closed forms for seed 002,
// a float64 implementation and PyTorch's own output (tests/golden/) for
// `train`, and the one-process model for model parallelism.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "run_program.hpp"
#include "training/checkpoint.hpp"
#include "training/loss.hpp"
#include "training/module.hpp"
#include "training/sgd.hpp"
#include "training/torch_random.hpp"
#include "training_reference.hpp"

namespace {

using ringlab::testing::ProgramRun;
using ringlab::testing::run_ringlab;

const std::vector<std::string> kBackends{"tcp", "inproc"};

ProgramRun lesson(const std::string& arguments, const std::string& backend = "tcp") {
  ProgramRun run =
      run_ringlab("lesson " + arguments + " --backend " + backend + " --timeout-ms 20000");
  INFO("ringlab lesson " << arguments << " --backend " << backend << " printed:\n" << run.output);
  REQUIRE(run.status == 0);
  return run;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::size_t count(const std::vector<std::string>& lines, const std::string& line) {
  return static_cast<std::size_t>(std::count(lines.begin(), lines.end(), line));
}

std::size_t index_of(const std::vector<std::string>& lines, const std::string& line) {
  return static_cast<std::size_t>(std::find(lines.begin(), lines.end(), line) - lines.begin());
}

std::string python_float(double v) {  // the few values these lessons print: 0.0, 2.0, 14.0, ...
  std::ostringstream out;
  out << v;
  std::string text = out.str();
  if (text.find('.') == std::string::npos) text += ".0";
  return text;
}

// "Rank r ..." lines of rank r, in order, without the "Rank r " prefix.
std::vector<std::string> of_rank(const std::vector<std::string>& lines, int rank) {
  const std::string prefix = "Rank " + std::to_string(rank) + " ";
  std::vector<std::string> mine;
  for (const std::string& line : lines)
    if (line.starts_with(prefix)) mine.push_back(line.substr(prefix.size()));
  return mine;
}

// ---- the train lesson's numbers ------------------------------------------------

// "Rank 0 step 1 loss" -> {0.0863...}; "Rank 0 step 1 net1.weight" -> 4 values.
using Numbers = std::map<std::string, std::vector<double>>;

Numbers parse_train(const std::string& text) {
  Numbers numbers;
  for (const std::string& line : lines_of(text)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string rank_word, rank, step_word, step, what;
    in >> rank_word >> rank >> step_word >> step >> what;
    REQUIRE(rank_word == "Rank");
    REQUIRE(step_word == "step");
    std::vector<double>& values = numbers[rank + " " + step + " " + what];
    for (double v; in >> v;) values.push_back(v);
  }
  return numbers;
}

// The train lesson in float64 (lessons/train.cpp states the program).
Numbers train_reference(int world, double lr, int steps) {
  ringlab::ref::ToyParams p;
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 10; ++j)
      p.w1[static_cast<std::size_t>(i * 10 + j)] = static_cast<float>(0.01 * (i - j));
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 10; ++j)
      p.w2[static_cast<std::size_t>(i * 10 + j)] = static_cast<float>(0.01 * (i - j));
  std::vector<std::vector<double>> xs(static_cast<std::size_t>(world)),
      ys(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r)
    for (int k = 0; k < 20; ++k) {
      const int g = 20 * r + k;
      for (int j = 0; j < 10; ++j)
        xs[static_cast<std::size_t>(r)].push_back(
            static_cast<float>(((g * 10 + j) % 7) / 7.0 - 0.5));
      for (int m = 0; m < 5; ++m)
        ys[static_cast<std::size_t>(r)].push_back(
            static_cast<float>(((g * 5 + m) % 11) / 11.0 - 0.5));
    }
  Numbers numbers;
  for (int step = 1; step <= steps; ++step) {
    ringlab::ref::ToyParams average;
    for (int r = 0; r < world; ++r) {
      const auto result = ringlab::ref::toy_loss_and_grad(p, xs[static_cast<std::size_t>(r)],
                                                          ys[static_cast<std::size_t>(r)]);
      numbers[std::to_string(r) + " " + std::to_string(step) + " loss"] = {result.loss};
      const auto add = [&](std::vector<double>& into, const std::vector<double>& g) {
        for (std::size_t i = 0; i < g.size(); ++i) into[i] += g[i] / world;
      };
      add(average.w1, result.grad.w1);
      add(average.b1, result.grad.b1);
      add(average.w2, result.grad.w2);
      add(average.b2, result.grad.b2);
    }
    ringlab::ref::sgd_step(p, average, lr);
    for (int r = 0; r < world; ++r) {
      const std::string key = std::to_string(r) + " " + std::to_string(step) + " ";
      numbers[key + "net1.weight"] = {p.w1.begin(), p.w1.begin() + 4};
      numbers[key + "net1.bias"] = {p.b1.begin(), p.b1.begin() + 4};
      numbers[key + "net2.weight"] = {p.w2.begin(), p.w2.begin() + 4};
      numbers[key + "net2.bias"] = {p.b2.begin(), p.b2.begin() + 4};
    }
  }
  return numbers;
}

void check_numbers(const Numbers& actual, const Numbers& expected, const char* against) {
  CAPTURE(against);
  REQUIRE(actual.size() == expected.size());
  for (const auto& [key, values] : expected) {
    CAPTURE(key);
    REQUIRE(actual.count(key) == 1);
    const std::vector<double>& got = actual.at(key);
    REQUIRE(got.size() == values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      INFO(got[i] << " vs " << values[i]);
      CHECK(ringlab::ref::close(got[i], values[i], 1e-6));
    }
  }
}

std::string golden(const std::string& name) {
  std::ifstream in(std::string(RINGLAB_GOLDEN_DIR) + "/" + name);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_SUITE("training_lessons") {
  TEST_CASE("ddp_init_broadcast prints seed 002's four lines") {
    for (const std::string& backend : kBackends) {
      CAPTURE(backend);
      const auto lines = lines_of(lesson("ddp_init_broadcast", backend).output);
      std::vector<std::string> sorted = lines;
      std::sort(sorted.begin(), sorted.end());
      CHECK(sorted == std::vector<std::string>{"at rank 0, after init, the weight is 0.0",
                                               "at rank 0, before init, the weight is 0.0",
                                               "at rank 1, after init, the weight is 0.0",
                                               "at rank 1, before init, the weight is 1.0"});
      for (int r : {0, 1})
        CHECK(index_of(lines, "at rank " + std::to_string(r) + ", before init, the weight is " +
                                  python_float(r)) <
              index_of(lines, "at rank " + std::to_string(r) + ", after init, the weight is 0.0"));
    }
  }

  TEST_CASE("ddp_grad_average: 14.0 on 2 ranks, then 7.0 for the same samples on 4") {
    for (const std::string& backend : kBackends) {
      CAPTURE(backend);
      const auto lines = lines_of(lesson("ddp_grad_average", backend).output);
      std::size_t previous_world_end = 0;
      for (const int world : {2, 4}) {
        CAPTURE(world);
        // Closed form: rank r holds x = r*n .. r*n + n-1 (n = 4 / world); the
        // gradient of sum((w x)^2) at w = 1 is sum(2 x^2); DDP gives the sum
        // over ranks / world.
        const int n = 4 / world;
        double total = 0;
        const std::size_t intro =
            index_of(lines, "the samples x = 0, 1, 2, 3 on " + std::to_string(world) + " ranks, " +
                                std::to_string(n) +
                                " per rank; w = 1, "
                                "label 0, loss = sum((w*x - label)**2) on each rank");
        REQUIRE(intro < lines.size());
        CHECK(intro >= previous_world_end);
        // Seed 002 prints the bare gradient on every rank (print(
        // model.module.weight.grad.item()): 14.0 twice); the lesson prints
        // those lines first, then its explanation. Threads share one stdout,
        // so on inproc the order is exact; lines of rank processes reach the
        // launcher through pipes of their own and interleave in any order
        // (docs/article-outputs.md), so there the world's output starts with
        // a bare line and holds one per rank.
        const std::string bare = world == 2 ? "14.0" : "7.0";
        const std::size_t first = previous_world_end == 0 ? 0 : previous_world_end + 1;
        REQUIRE(first < lines.size());
        CHECK(lines[first] == bare);
        const auto block_end = lines.begin() + static_cast<std::ptrdiff_t>(std::min(
                                   lines.size(), intro + 3 * static_cast<std::size_t>(world) + 2));
        CHECK(std::count(lines.begin() + static_cast<std::ptrdiff_t>(first), block_end, bare) ==
              world);
        if (backend == "inproc") {
          REQUIRE(intro == first + static_cast<std::size_t>(world));
          for (std::size_t i = first; i < intro; ++i) CHECK(lines[i] == bare);
        }
        for (int r = 0; r < world; ++r) {
          double local = 0;
          std::string xs;
          for (int k = 0; k < n; ++k) {
            const double x = r * n + k;
            local += 2 * x * x;
            xs += (k ? ", " : "") + python_float(x);
          }
          total += local;
          CHECK(count(lines, "at rank " + std::to_string(r) + ", x = [" + xs +
                                 "], the local gradient is " + python_float(local)) == 1);
        }
        const std::string average = python_float(total / world);
        CHECK(average == (world == 2 ? "14.0" : "7.0"));
        for (int r = 0; r < world; ++r) {
          const std::size_t at = index_of(
              lines, "at rank " + std::to_string(r) + ", after DDP, the gradient is " + average);
          CHECK(at < lines.size());
          // After the intro (rank 0's) where one stdout orders them; rank
          // processes' lines only come after the world's first line.
          CHECK(at > (backend == "inproc" ? intro : first));
          previous_world_end = std::max(previous_world_end, at);
        }
        // The world's last line: rank 0 prints it after a barrier, and on
        // rank processes the other ranks' last lines may still come after it.
        const std::string w = std::to_string(world);
        const std::size_t summary =
            index_of(lines, "the gradient over all four samples is " + python_float(total) +
                                "; DDP divides the sum over ranks by " + w + ": " +
                                python_float(total) + " / " + w + " = " + average);
        REQUIRE(summary < lines.size());
        CHECK(summary > intro);
        previous_world_end = std::max(previous_world_end, summary);
      }
    }
    const auto one = lines_of(lesson("ddp_grad_average -n 1", "inproc").output);
    CHECK(count(one, "at rank 0, after DDP, the gradient is 28.0") == 1);
  }

  TEST_CASE("a world size a lesson cannot use is refused before any rank starts") {
    for (const auto& [arguments, message] :
         {std::pair<std::string, std::string>{"ddp_grad_average -n 3",
                                              "cannot run on 3 ranks: the four samples"},
          {"pingpong -n 3", "it needs exactly 2 ranks"},
          {"pingpong -n 1", "it needs exactly 2 ranks"}}) {
      CAPTURE(arguments);
      const ProgramRun run = run_ringlab("lesson " + arguments + " --timeout-ms 5000");
      CHECK(run.status != 0);
      CHECK(run.output.find(message) != std::string::npos);
      CHECK(run.output.find("Rank ") == std::string::npos);  // no rank ran
      CHECK(run.output.find("at rank") == std::string::npos);
    }
    for (const std::string arguments : {"train --steps 0", "train --lr -1"}) {
      const ProgramRun run = run_ringlab("lesson " + arguments);
      CHECK(run.status != 0);
      CHECK(run.output.find("Rank ") == std::string::npos);
    }
  }

  TEST_CASE("train agrees with a float64 reference and with PyTorch to 1e-6") {
    const std::vector<std::tuple<std::string, std::string, double, int>> runs{
        {"", "train_lr0.001_steps3.txt", 0.001, 3},
        {"--lr 0.05 --steps 5", "train_lr0.05_steps5.txt", 0.05, 5}};
    for (const auto& [options, golden_file, lr, steps] : runs) {
      const Numbers torch = parse_train(golden(golden_file));
      const Numbers reference = train_reference(2, lr, steps);
      check_numbers(torch, reference, "PyTorch against the float64 reference");
      for (const std::string& backend : kBackends) {
        CAPTURE(backend);
        CAPTURE(options);
        const Numbers ours = parse_train(lesson("train " + options, backend).output);
        check_numbers(ours, reference, "the float64 reference");
        check_numbers(ours, torch, golden_file.c_str());
      }
    }
    // Any world size: the same program on 3 ranks.
    check_numbers(parse_train(lesson("train -n 3", "inproc").output), train_reference(3, 0.001, 3),
                  "the float64 reference on 3 ranks");
  }

  TEST_CASE(
      "ddp_basic, ddp_checkpoint, model_parallel, demo_model_parallel print what PyTorch computes "
      "for them") {
    // tests/golden/make_ddp_golden.py runs the tutorial's programs in PyTorch 1.13.
    // Each rank's lines compared: its loss and 4 parameters after the step
    // (ddp_checkpoint: and the 4 parameters it loaded); seed 42 on every
    // rank, so ddp_checkpoint's loss is demo_basic's 0.915320635 on both.
    const std::tuple<const char*, const char*, int, int> runs[] = {
        {"ddp_basic", "ddp_basic.txt", 2, 5},
        {"ddp_checkpoint", "ddp_checkpoint.txt", 2, 9},
        {"model_parallel", "model_parallel.txt", 1, 5},
        {"demo_model_parallel", "demo_model_parallel.txt", 4, 5}};
    for (const auto& [name, golden_file, world, per_rank] : runs) {
      const auto expected = lines_of(golden(golden_file));
      for (const std::string& backend : kBackends) {
        CAPTURE(name);
        CAPTURE(backend);
        const auto lines = lines_of(lesson(name, backend).output);
        int compared = 0;
        for (const std::string& line : expected) {
          if (line.empty() || line[0] == '#' || line[0] == '=') continue;
          CAPTURE(line);
          ++compared;
          const std::size_t loss_at = line.find(" loss ");
          if (loss_at == std::string::npos) {  // a tensor as PyTorch prints it: the same text
            CHECK(count(lines, line) == 1);
            continue;
          }
          // The loss: PyTorch adds in another order, so only to float32's last digits.
          const std::string prefix = line.substr(0, loss_at + 6);
          const auto ours = std::find_if(lines.begin(), lines.end(), [&](const std::string& l) {
            return l.starts_with(prefix);
          });
          REQUIRE(ours != lines.end());
          CHECK(ringlab::ref::close(std::stod(ours->substr(prefix.size())),
                                    std::stod(line.substr(prefix.size())), 1e-6));
        }
        CHECK(compared == per_rank * world);
      }
    }
  }

  TEST_CASE("the tutorial's step in the training library gives PyTorch's parameters to 1e-6") {
    // model_parallel.txt's "= " lines: the first four values of each parameter
    // after PyTorch's step, with 9 significant digits.
    using namespace ringlab::training;
    TorchGenerator torch(42);
    ToyModel model;
    torch_init_toy_model(model, torch);
    SGD optimizer(model.parameters(), {.lr = 0.001});
    MSELoss loss_fn;
    const FloatTensor x = torch.randn(20, 10), y = torch.randn(20, 5);
    loss_fn.forward(model.forward(x), y);
    model.backward(loss_fn.backward());
    optimizer.step();
    int compared = 0;
    for (const std::string& line : lines_of(golden("model_parallel.txt"))) {
      if (!line.starts_with("= Rank 0 after step ")) continue;
      std::istringstream in(line.substr(20));
      std::string name;
      in >> name;
      CAPTURE(name);
      const FloatTensor& value =
          name == "net1.weight" ? model.net1().weight.value
          : name == "net1.bias" ? model.net1().bias.value
          : name == "net2.weight" ? model.net2().weight.value : model.net2().bias.value;
      for (std::size_t i = 0; i < 4; ++i) {
        double torch_value = 0;
        in >> torch_value;
        CHECK(ringlab::ref::close(value[i], torch_value, 1e-6));
      }
      ++compared;
    }
    CHECK(compared == 4);
  }

  TEST_CASE("ddp_basic says why every rank prints the same loss") {
    const auto lines = lines_of(lesson("ddp_basic", "inproc").output);
    CHECK(count(lines, "Rank 0 DDP buckets, in the order backward fills them: bucket 0: "
                       "module.net2.bias module.net2.weight module.net1.bias module.net1.weight "
                       "(660 bytes)") == 1);
    CHECK(count(lines, "Rank 0 every rank draws the same batch: setup() seeds every process with "
                       "42, and each draws torch.randn after the same ToyModel, so every rank "
                       "prints the same loss") == 1);
  }

  TEST_CASE("ddp_checkpoint: rank 0 saves, every rank loads the same state, then one step") {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("ringlab-test-lesson-" + std::to_string(::getpid()) + ".checkpoint"))
                                 .string();
    for (const std::string& backend : kBackends) {
      CAPTURE(backend);
      const auto lines = lines_of(lesson("ddp_checkpoint --checkpoint " + path, backend).output);
      CHECK(count(lines,
                  "Rank 0 saved the state dict (4 tensors: module.net1.weight, module.net1.bias, "
                  "module.net2.weight, module.net2.bias)") == 1);
      CHECK(count(lines, "Rank 0 kept the checkpoint at " + path) == 1);
      const auto rank0 = of_rank(lines, 0), rank1 = of_rank(lines, 1);
      const auto starting = [](const std::vector<std::string>& mine, const std::string& prefix) {
        std::vector<std::string> picked;
        for (const std::string& l : mine)
          if (l.starts_with(prefix)) picked.push_back(l);
        return picked;
      };
      CHECK(starting(rank0, "loaded module.").size() == 4);
      CHECK(starting(rank0, "loaded module.") == starting(rank1, "loaded module."));
      CHECK(starting(rank0, "after step").size() == 4);
      CHECK(starting(rank0, "after step") == starting(rank1, "after step"));
      // Saved before the barrier, loaded after it: save precedes every load.
      CHECK(
          index_of(lines,
                   "Rank 0 saved the state dict (4 tensors: module.net1.weight, module.net1.bias, "
                   "module.net2.weight, module.net2.bias)") <
          index_of(lines, "Rank 1 loaded the checkpoint"));
      // The kept file is a checkpoint of the DDP model.
      const ringlab::training::Checkpoint c = ringlab::training::load_checkpoint(path);
      REQUIRE(c.model.size() == 4);
      CHECK(c.model[0].name == "module.net1.weight");
      CHECK(c.model[0].value.shape_string() == "[10, 10]");
      std::filesystem::remove(path);
    }
  }

  TEST_CASE("model_parallel moves the activations between its two devices, and back") {
    // 20 samples of 10 activations, float32: 800 bytes each way.
    const auto lines = lines_of(lesson("model_parallel", "inproc").output);
    CHECK(count(lines, "Rank 0 ToyMpModel: net1 and relu on cpu:0, net2 on cpu:1 (memory spaces "
                       "of this process)") == 1);
    CHECK(index_of(lines, "Rank 0 moved the activations (800 bytes) from cpu:0 to cpu:1") <
          index_of(lines, "Rank 0 moved the gradient of the activations (800 bytes) from cpu:1 to "
                          "cpu:0"));
    CHECK(index_of(lines, "Rank 0 moved the gradient of the activations (800 bytes) from cpu:1 to "
                          "cpu:0") < lines.size());
    // demo_model_parallel: rank r's devices are the tutorial's 2r and 2r + 1.
    const auto demo = lines_of(lesson("demo_model_parallel", "inproc").output);
    for (int r = 0; r < 4; ++r)
      CHECK(count(demo, "Rank " + std::to_string(r) + " moved the activations (800 bytes) from cpu:" +
                            std::to_string(2 * r) + " to cpu:" + std::to_string(2 * r + 1)) == 1);
  }

  TEST_CASE(
      "horovod: lr x size, broadcast from rank 0, a loss per rank per epoch, rank-0 checkpoints "
      "kept in --checkpoint-dir") {
    const std::filesystem::path folder =
        std::filesystem::temp_directory_path() /
        ("ringlab-test-horovod-" + std::to_string(::getpid())) / "checkpoints";
    const ProgramRun run = ringlab::testing::run_shell(
        ringlab::testing::kCleanEnvironment + "HOROVOD_FUSION_THRESHOLD=300 " + RINGLAB_EXE +
        " lesson horovod --timeout-ms 20000 --checkpoint-dir " + folder.string());
    INFO(run.output);
    REQUIRE(run.status == 0);
    const auto lines = lines_of(run.output);
    std::vector<std::string> before, after;
    for (int r = 0; r < 4; ++r) {
      const auto mine = of_rank(lines, r);
      CHECK(count(mine, "hvd.rank() = " + std::to_string(r) +
                            ", hvd.local_rank() = " + std::to_string(r) + ", hvd.size() = 4") == 1);
      for (const auto& l : mine) {
        if (l.starts_with("before broadcast_parameters")) before.push_back(l);
        if (l.starts_with("after broadcast_parameters")) after.push_back(l);
      }
      for (int epoch = 0; epoch < 3; ++epoch) {
        const std::string prefix = "epoch " + std::to_string(epoch) + " loss ";
        CHECK(std::count_if(mine.begin(), mine.end(),
                            [&](const std::string& l) { return l.starts_with(prefix); }) == 1);
      }
    }
    REQUIRE(before.size() == 4);
    REQUIRE(after.size() == 4);
    for (int r = 1; r < 4; ++r) {
      CHECK(before[static_cast<std::size_t>(r)] != before[0]);  // each rank started elsewhere
      CHECK(after[static_cast<std::size_t>(r)] == after[0]);
    }
    CHECK(after[0].substr(after[0].find("tensor")) ==
          before[0].substr(before[0].find("tensor")));  // rank 0's
    CHECK(count(lines, "Rank 0 lr = base_lr * hvd.size() = 0.0125 * 4 = 0.05") == 1);
    // Kept where --checkpoint-dir says, each path said once, by rank 0.
    for (int epoch = 0; epoch < 3; ++epoch) {
      const std::filesystem::path kept = folder / ("checkpoint-" + std::to_string(epoch) + ".json");
      CHECK(count(lines, "Rank 0 saved " + kept.string() + " (rank 0 only)") == 1);
      REQUIRE(std::filesystem::exists(kept));
      CHECK(ringlab::training::load_checkpoint(kept.string()).epoch == epoch);
    }
    CHECK(std::count_if(lines.begin(), lines.end(), [](const std::string& l) {
            return l.find(" saved ") != std::string::npos;
          }) == 3);
    std::filesystem::remove_all(folder.parent_path());
    // 300-byte fusion buffer: net2.bias + net2.weight + net1.bias fit (260 B),
    // net1.weight (400 B) goes alone.
    CHECK(count(lines,
                "Rank 0 the last step's fused all_reduces: 3 gradients in 260 bytes; 1 gradient in "
                "400 bytes") == 1);
  }

  TEST_CASE("the tour runs the training lessons too, and skips what a world size cannot run") {
    // Run in an empty folder: horovod's checkpoints go to ringlab-runs/horovod
    // there, said where, and nothing else is left behind.
    const std::filesystem::path here = std::filesystem::temp_directory_path() /
                                       ("ringlab-test-tour-" + std::to_string(::getpid()));
    std::filesystem::create_directories(here);
    const ProgramRun tour = ringlab::testing::run_shell(
        "cd " + here.string() + " && " + ringlab::testing::kCleanEnvironment + RINGLAB_EXE +
        " tour --backend inproc --timeout-ms 20000");
    INFO(tour.output);
    REQUIRE(tour.status == 0);
    std::vector<std::string> left;
    for (const auto& entry : std::filesystem::directory_iterator(here))
      left.push_back(entry.path().filename().string());
    CHECK(left == std::vector<std::string>{"ringlab-runs"});
    for (int epoch = 0; epoch < 3; ++epoch) {
      const std::filesystem::path kept =
          here / "ringlab-runs" / "horovod" / ("checkpoint-" + std::to_string(epoch) + ".json");
      CHECK(tour.output.find("Rank 0 saved " + kept.string() + " (rank 0 only)\n") !=
            std::string::npos);
      CHECK(ringlab::training::load_checkpoint(kept.string()).epoch == epoch);
    }
    std::filesystem::remove_all(here);
    for (const std::string name : {"ddp_init_broadcast", "ddp_grad_average", "ddp_basic",
                                   "ddp_checkpoint", "model_parallel", "demo_model_parallel",
                                   "horovod", "train"})
      CHECK(tour.output.find("\n# " + name + " (world ") != std::string::npos);
    CHECK(tour.output.find("# ddp_grad_average (world 2, then 4)") != std::string::npos);
    CHECK(tour.output.find("at rank 1, after DDP, the gradient is 14.0") != std::string::npos);
    CHECK(tour.output.find("at rank 3, after DDP, the gradient is 7.0") != std::string::npos);
    const ProgramRun four = run_ringlab("tour -n 4 --backend inproc --timeout-ms 20000");
    CHECK(four.status == 0);
    CHECK(four.output.find("# pingpong (skipped: not on 4 ranks): send/recv") !=
          std::string::npos);
    CHECK(four.output.find("skipped: the article's ping-pong passes a tensor between rank 0 and "
                           "rank 1") != std::string::npos);
  }

  TEST_CASE("ringlab sim ddp: how much all_reduce hides behind backward, in closed form") {
    // 4 MiB of parameters in 4 layers and buckets of 1 MiB, 2 ranks, alpha 0,
    // 1 GB/s: each bucket's ring all_reduce takes 2(P-1)/P * 1 MiB / 1 GB/s =
    // 1.048576 ms; they are ready at 25, 50, 75 and 100 ms, so only the last
    // one is exposed: 3 of 4 hidden.
    const ProgramRun run = run_ringlab(
        "sim ddp --params 1048576 --layers 4 --bucket-mb 1 --first-bucket-mb 1 --backward-ms 100 "
        "--ranks 2 --algo ring --alpha 0 --bandwidth 1");
    INFO(run.output);
    CHECK(run.status == 0);
    CHECK(run.output.find("hidden behind backward: 3.146 ms of 4.194 ms (75.0%); exposed after it: "
                          "1.049 ms") != std::string::npos);
    CHECK(run.output.find("without buckets (one all_reduce after backward): ready at 104.194 ms") !=
          std::string::npos);
    const ProgramRun bad = run_ringlab("sim ddp --params 10 --layers 20");
    CHECK(bad.status != 0);
    CHECK(bad.output.find("--layers must be between 1 and the number of parameters") !=
          std::string::npos);
  }

}  // TEST_SUITE
