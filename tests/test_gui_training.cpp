// The training-step walkthroughs (ddp_step, horovod_step) show the numbers
// ringlab's DDP and Horovod-style optimizer really computed: checked against
// a float64 reference of the walkthrough's model written here (independent of
// training/), against a direct run of the same step without the recorder, and
// frame by frame on what the GUI shows. Also: the record does not depend on
// how threads interleave, the overlap drawn agrees with training_sim/overlap.hpp,
// and bad settings are refused with a reason.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "gui/frame.hpp"
#include "gui/state.hpp"
#include "gui/training_walk.hpp"
#include "primitives/process_group.hpp"
#include "training/ddp.hpp"
#include "training/horovod.hpp"
#include "training/loss.hpp"
#include "training/sgd.hpp"
#include "training_sim/recorded_step.hpp"
#include "transport/inproc.hpp"

using namespace ringlab;
using namespace ringlab::gui;
using training::GradientSync;
using training::RecordedStep;

namespace {

// ---- float64 reference of the walkthrough's model (recorded_step.hpp) --------
// net1.weight [2,1], net2.weight [1,2], net3.weight [2,1], net4.weight [1,2];
// out = W4 W3 W2 W1 x; loss = mean over the batch of (out - y)^2.
using Weights = std::vector<std::vector<double>>;  // per layer, two values

Weights initial_weights(int rank) {
  Weights w{{1.0, 0.5}, {0.5, 1.0}, {1.0, -0.5}, {0.5, 0.5}};
  for (auto& layer : w)
    for (double& v : layer) v += 0.25 * rank;
  return w;
}

struct Sample {
  double x, y;
};
std::vector<Sample> batch_of(int rank) { return {{1.0 + 2 * rank, 2.0}, {2.0 + 2 * rank, 2.0}}; }

// d loss / d weights, the loss being the mean over `samples`.
Weights gradient(const Weights& w, const std::vector<Sample>& samples) {
  Weights g{{0, 0}, {0, 0}, {0, 0}, {0, 0}};
  const double n = static_cast<double>(samples.size());
  for (const Sample& s : samples) {
    const double h1[2] = {w[0][0] * s.x, w[0][1] * s.x};
    const double h2 = w[1][0] * h1[0] + w[1][1] * h1[1];
    const double h3[2] = {w[2][0] * h2, w[2][1] * h2};
    const double out = w[3][0] * h3[0] + w[3][1] * h3[1];
    const double d = 2 * (out - s.y) / n;
    double dh2 = 0;
    for (int j = 0; j < 2; ++j) {
      g[3][j] += d * h3[j];
      g[2][j] += d * w[3][j] * h2;
      dh2 += d * w[3][j] * w[2][j];
    }
    for (int j = 0; j < 2; ++j) {
      g[1][j] += dh2 * h1[j];
      g[0][j] += dh2 * w[1][j] * s.x;
    }
  }
  return g;
}

std::vector<Sample> union_batch(int world) {
  std::vector<Sample> all;
  for (int r = 0; r < world; ++r)
    for (const Sample& s : batch_of(r)) all.push_back(s);
  return all;
}

bool close(double a, double b, double rel, double abs = 1e-7) {
  return std::fabs(a - b) <= rel * std::fmax(std::fabs(a), std::fabs(b)) + abs;
}

// ---- the same step run directly, without the recorder ---------------------------

training::Values direct_run(GradientSync sync, int world, std::size_t bucket_floats) {
  std::vector<training::Values> after(static_cast<std::size_t>(world));
  run_world(world, [&](Transport& transport) {
    const int rank = transport.rank();
    ProcessGroupOptions options;
    options.algorithms[Collective::AllReduce] = "ring";
    ProcessGroup pg(std::shared_ptr<Transport>(&transport, [](Transport*) {}), options);
    std::unique_ptr<training::Sequential> model = training::walkthrough_model(rank);
    training::MSELoss loss_fn;
    const std::size_t cap = bucket_floats * sizeof(float);
    if (sync == GradientSync::Ddp) {
      training::DistributedDataParallel ddp(
          *model, pg, {.bucket_cap_mb = cap / (1024.0 * 1024.0), .first_bucket_bytes = cap});
      training::SGD sgd(ddp.parameters(), {.lr = 0.1});
      sgd.zero_grad();
      loss_fn.forward(ddp.forward(training::walkthrough_inputs(rank)),
                      training::walkthrough_targets(rank));
      ddp.backward(loss_fn.backward());
      sgd.step();
    } else {
      auto hvd = training::hvd::init(pg);
      training::hvd::broadcast_parameters(hvd, *model, 0);
      training::SGD sgd(model->parameters(), {.lr = 0.1 * hvd.size()});
      training::hvd::DistributedOptimizer optimizer(hvd, sgd, model->named_parameters(),
                                                    {.fusion_threshold_bytes = cap});
      optimizer.zero_grad();
      loss_fn.forward(model->forward(training::walkthrough_inputs(rank)),
                      training::walkthrough_targets(rank));
      model->backward(loss_fn.backward());
      optimizer.step();
    }
    for (training::Parameter* p : model->parameters())
      after[static_cast<std::size_t>(rank)].emplace_back(p->value.values().begin(),
                                                         p->value.values().end());
  });
  for (int r = 1; r < world; ++r) REQUIRE(after[static_cast<std::size_t>(r)] == after[0]);
  return after[0];
}

// The GUI's cell text back as a number (it prints 4 significant digits).
double cell_value(const CellView& cell) {
  REQUIRE_FALSE(cell.text.empty());
  return std::stod(cell.text);
}

sim::RankSet all_ranks(int world) { return sim::RankSet::range(0, world); }

const BufferView& buffer_named(const RankPanel& panel, const std::string& name) {
  for (const BufferView& buffer : panel.buffers)
    if (buffer.name == name) return buffer;
  FAIL("rank " << panel.rank << " shows no buffer " << name);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("the recorded step's numbers are DDP's and Horovod's: float64 reference, direct run") {
  for (const GradientSync sync : {GradientSync::Ddp, GradientSync::Horovod}) {
    for (int world : {2, 3, 4}) {
      const std::size_t cap = sync == GradientSync::Ddp ? 4 : 6;
      CAPTURE(world);
      CAPTURE(static_cast<int>(sync));
      const RecordedStep step =
          training::record_training_step({.sync = sync, .ranks = world, .bucket_floats = cap});
      REQUIRE(step.ranks.size() == static_cast<std::size_t>(world));
      REQUIRE(step.parameter_names ==
              std::vector<std::string>{"net1.weight", "net2.weight", "net3.weight", "net4.weight"});
      const double lr = sync == GradientSync::Ddp ? 0.1 : 0.1 * world;
      CHECK(step.lr == doctest::Approx(lr));
      const Weights start = initial_weights(0);
      const Weights average = gradient(start, union_batch(world));
      for (int r = 0; r < world; ++r) {
        const training::RankRecord& rank = step.ranks[static_cast<std::size_t>(r)];
        const Weights local = gradient(start, batch_of(r));
        for (std::size_t layer = 0; layer < 4; ++layer)
          for (std::size_t j = 0; j < 2; ++j) {
            CAPTURE(r);
            CAPTURE(layer);
            CAPTURE(j);
            CHECK(rank.initial[layer][j] == doctest::Approx(initial_weights(r)[layer][j]));
            CHECK(rank.before[layer][j] == doctest::Approx(start[layer][j]));  // the broadcast
            CHECK(close(rank.local_gradients[layer][j], local[layer][j], 1e-6));
            // DDP's average over the ranks is the gradient of the union batch.
            CHECK(close(rank.averaged_gradients[layer][j], average[layer][j], 1e-6));
            CHECK(close(rank.after[layer][j], start[layer][j] - lr * average[layer][j], 1e-6));
          }
        CHECK(rank.after == step.ranks[0].after);  // bit for bit, on every rank
      }
      // Recording changed nothing: the same step without the recorder.
      CHECK(direct_run(sync, world, cap) == step.ranks[0].after);
    }
  }
}

TEST_CASE("the record is the same whatever the threads' interleaving") {
  // The rank's thread and its process group's worker run side by side:
  // many tries give them many chances to interleave differently.
  const RecordedStep a = training::record_training_step({.ranks = 4, .bucket_floats = 2});
  for (int attempt = 0; attempt < 20; ++attempt) {
    const RecordedStep b = training::record_training_step({.ranks = 4, .bucket_floats = 2});
    REQUIRE(a.run.steps == b.run.steps);
    REQUIRE(a.run.regions.size() == b.run.regions.size());
    for (std::size_t i = 0; i < a.run.regions.size(); ++i) {
      CHECK(a.run.regions[i].name == b.run.regions[i].name);
      CHECK(a.run.regions[i].rank == b.run.regions[i].rank);
    }
    REQUIRE(a.run.messages.size() == b.run.messages.size());
    for (std::size_t i = 0; i < a.run.messages.size(); ++i) {
      const sim::Message& x = a.run.messages[i];
      const sim::Message& y = b.run.messages[i];
      CHECK(x.step == y.step);
      CHECK(x.src == y.src);
      CHECK(x.dst == y.dst);
      CHECK(x.from == y.from);
      CHECK(x.to == y.to);
      CHECK(x.reduced == y.reduced);
    }
    sim::Replay ra(a.run), rb(b.run);
    for (sim::Step k = 0; k <= a.run.steps; ++k) {
      ra.seek(k);
      rb.seek(k);
      for (std::size_t region = 0; region < a.run.regions.size(); ++region) {
        const auto va = ra.values(static_cast<int>(region));
        const auto vb = rb.values(static_cast<int>(region));
        CHECK(std::equal(va.begin(), va.end(), vb.begin(), vb.end()));
        CHECK(ra.provenance(static_cast<int>(region)) == rb.provenance(static_cast<int>(region)));
      }
    }
  }
}

TEST_CASE("ddp_step shows DDP's numbers: gradients, their sum, the average, the update") {
  for (int world : {2, 4}) {
    CAPTURE(world);
    GuiState state = make_state("ddp_step", world);
    const Act& act = state.recording.acts.front();
    REQUIRE(act.training);
    const TrainingWalk& walk = *act.training;
    REQUIRE(walk.step.buckets.size() == 2);
    const Weights start = initial_weights(0);
    const Weights average = gradient(start, union_batch(world));
    const training::Values direct = direct_run(GradientSync::Ddp, world, 4);
    // The parameter a bucket's slot holds, element by element.
    auto bucket_layers = [&](std::size_t b) {
      std::vector<std::pair<std::size_t, std::size_t>> elements;  // (layer, j)
      for (int p : walk.step.buckets[b].parameters)
        for (std::size_t j = 0; j < 2; ++j) elements.emplace_back(static_cast<std::size_t>(p), j);
      return elements;
    };
    // Buckets are filled in reverse layer order: net4, net3 | net2, net1.
    CHECK(bucket_layers(0).front().first == 3);
    CHECK(bucket_layers(1).back().first == 0);

    for (int frame = 0; frame < frame_count(state); ++frame) {
      apply(state, JumpTo{frame});
      const FrameView view = build_frame(state);
      const TrainingTick& tick = walk.ticks[static_cast<std::size_t>(frame)];
      CAPTURE(frame);
      REQUIRE(view.ranks.size() == static_cast<std::size_t>(world));
      for (const RankPanel& panel : view.ranks) {
        CAPTURE(panel.rank);
        const Weights local = gradient(start, batch_of(panel.rank));
        // Parameters: rank 0's (broadcast) until the update, then the
        // direct run's, holding every rank's data.
        const BufferView& params = buffer_named(panel, "parameters");
        REQUIRE(params.cells.size() == 8);
        for (std::size_t i = 0; i < 8; ++i) {
          const double expected = tick.compute == TrainingTick::Compute::Update
                                      ? direct[i / 2][i % 2]
                                      : start[i / 2][i % 2];
          CHECK(close(cell_value(params.cells[i]), expected, 5e-4));
          CHECK(
              params.cells[i].provenance ==
              (tick.compute == TrainingTick::Compute::Update ? all_ranks(world) : sim::RankSet{}));
        }
        for (std::size_t b = 0; b < 2; ++b) {
          const BufferView& bucket = buffer_named(panel, "bucket " + std::to_string(b));
          const auto elements = bucket_layers(b);
          REQUIRE(bucket.cells.size() == elements.size());
          const bool summed = tick.shown_step >= walk.last_step[b];
          for (std::size_t e = 0; e < elements.size(); ++e) {
            const auto [layer, j] = elements[e];
            const CellView& cell = bucket.cells[e];
            CAPTURE(b);
            CAPTURE(e);
            if (frame >= walk.divide_tick) {
              CHECK(close(cell_value(cell), average[layer][j], 5e-4));
              CHECK(cell.provenance == all_ranks(world));
            } else if (summed) {  // the all_reduce is done: the SUM over the ranks
              CHECK(close(cell_value(cell), world * average[layer][j], 5e-4));
              CHECK(cell.provenance == all_ranks(world));
            } else if (tick.shown_step < static_cast<long long>(walk.first_step[b])) {
              // Before its all_reduce: the rank's own gradient, once produced.
              if (walk.gradient_tick[layer] > frame) {
                CHECK(cell.text.empty());
                CHECK(cell.provenance.empty());
              } else {
                CHECK(close(cell_value(cell), local[layer][j], 5e-4));
                CHECK(cell.provenance == sim::RankSet::single(panel.rank));
              }
            } else {
              CHECK(cell.provenance.contains(panel.rank));  // partial sums
            }
          }
        }
      }
    }
  }
}

TEST_CASE("horovod_step: the fusion buffers keep the sums, .grad gets the average") {
  GuiState state = make_state("horovod_step");
  const TrainingWalk& walk = *state.recording.acts.front().training;
  const int world = 2;
  // A threshold of 6 gradients: net4, net3, net2 fill the first buffer; net1
  // waits in the second until step().
  REQUIRE(walk.step.buckets.size() == 2);
  CHECK(walk.step.buckets[0].parameters == std::vector<int>{3, 2, 1});
  CHECK(walk.step.buckets[1].parameters == std::vector<int>{0});
  CHECK(walk.issue_tick[1] == walk.backward_end + 1);
  const Weights start = initial_weights(0);
  const Weights average = gradient(start, union_batch(world));
  apply(state, JumpTo{walk.divide_tick});
  const FrameView view = build_frame(state);
  for (const RankPanel& panel : view.ranks) {
    const BufferView& grad = buffer_named(panel, ".grad (averaged)");
    REQUIRE(grad.cells.size() == 8);
    for (std::size_t i = 0; i < 8; ++i)
      CHECK(close(cell_value(grad.cells[i]), average[i / 2][i % 2], 5e-4));
    const BufferView& last = buffer_named(panel, "fusion buffer 1");
    REQUIRE(last.cells.size() == 2);
    for (std::size_t j = 0; j < 2; ++j)
      CHECK(close(cell_value(last.cells[j]), world * average[0][j], 5e-4));
  }
  apply(state, JumpToEnd{});
  const training::Values direct = direct_run(GradientSync::Horovod, world, 6);
  for (const RankPanel& panel : build_frame(state).ranks) {
    const BufferView& params = buffer_named(panel, "parameters");
    for (std::size_t i = 0; i < 8; ++i)
      CHECK(close(cell_value(params.cells[i]), direct[i / 2][i % 2], 5e-4));
  }
}

TEST_CASE("communication overlaps backward: drawn so, and as the code issued it") {
  for (int world : {2, 3, 4}) {
    CAPTURE(world);
    GuiState state = make_state("ddp_step", world);
    const TrainingWalk& walk = *state.recording.acts.front().training;
    // In the code: DDP issued bucket 0's all_reduce before backward produced
    // net1.weight's gradient, on every rank.
    for (const training::RankRecord& rank : walk.step.ranks) {
      int issued = -1;
      int last_gradient = -1;
      for (std::size_t i = 0; i < rank.events.size(); ++i) {
        const training::StepEvent& e = rank.events[i];
        if (e.kind == training::StepEvent::Kind::AllReduceIssued && e.index == 0 && issued < 0)
          issued = static_cast<int>(i);
        if (e.kind == training::StepEvent::Kind::GradientReady && e.index == 0)
          last_gradient = static_cast<int>(i);
      }
      CHECK(issued >= 0);
      CHECK(issued < last_gradient);
    }
    // On screen: bucket 0's first message step is drawn beside a backward tick.
    bool drawn_during_backward = false;
    for (int t = 0; t <= walk.backward_end; ++t) {
      const TrainingTick& tick = walk.ticks[static_cast<std::size_t>(t)];
      if (tick.step_runs && tick.compute == TrainingTick::Compute::Backward)
        drawn_during_backward = true;
    }
    CHECK(drawn_during_backward);
    CHECK(walk.steps_during_backward == 2);  // net2's and net1's ticks
    // The overlap model (training_sim/overlap.hpp) with one step per layer
    // agrees with what is drawn: the share of the steps beside backward.
    const double drawn = static_cast<double>(walk.steps_during_backward) / walk.step.run.steps;
    double modelled = -1;
    const std::regex this_run(R"(\((\d+)%\)  <- this run)");
    for (const std::string& line : walk.overlap_lines) {
      std::smatch match;
      if (std::regex_search(line, match, this_run)) modelled = std::stod(match[1].str()) / 100;
    }
    CHECK(modelled == doctest::Approx(drawn).epsilon(0.01));
  }
  // One bucket for the whole model: nothing can start before backward ends.
  Settings one_bucket = scenario_settings("ddp_step", 2);
  one_bucket.elements = 8;
  const GuiState state = make_state(one_bucket);
  const TrainingWalk& walk = *state.recording.acts.front().training;
  CHECK(walk.step.buckets.size() == 1);
  CHECK(walk.steps_during_backward == 0);
}

TEST_CASE("a training step refuses settings it cannot run, saying why") {
  CHECK_THROWS_WITH_AS(training::record_training_step({.ranks = 17}),
                       doctest::Contains("pick 1 to 16"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(training::record_training_step({.bucket_floats = 0}),
                       doctest::Contains("at least one gradient"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(training::record_training_step({.algorithm = "ringg"}),
                       doctest::Contains("pick one of ring"), std::invalid_argument);
  GuiState state = make_state("ddp_step");
  apply(state, SetElements{0});  // the control clamps; a command may not
  CHECK(state.error.find("out of range") != std::string::npos);
  CHECK(frame_count(state) > 1);  // the old run stays
}

TEST_CASE("a training step's frames share the collectives' words, times and cost block") {
  // Issue 22: training_walk.cpp had drifted from frame_text.cpp: its own
  // message_clause, times with one decimal where the side panel has two, and
  // no algbw/busbw in its cost block.
  for (const std::string scenario : {"ddp_step", "horovod_step"}) {
    CAPTURE(scenario);
    GuiState state = make_state(scenario, 3);
    const Act& act = state.recording.acts.front();
    const sim::Run& run = act.run;
    REQUIRE(act.prediction.algbw_GBps > 0);
    int frames_with_messages = 0;
    for (int frame = 0; frame < frame_count(state); ++frame) {
      apply(state, JumpTo{frame});
      const FrameView view = build_frame(state);
      CAPTURE(frame);
      // The cost block is the one every frame fills.
      CHECK(view.cost.algbw_GBps == act.prediction.algbw_GBps);
      CHECK(view.cost.busbw_GBps == act.prediction.busbw_GBps);
      CHECK(view.cost.total_seconds == act.prediction.total_s);
      // Each message line is the one clause every walkthrough uses.
      const TrainingTick& tick = act.training->ticks[static_cast<std::size_t>(frame)];
      if (!tick.step_runs) {
        CHECK(view.message_lines.empty());
        continue;
      }
      ++frames_with_messages;
      const auto messages = run.messages_in(static_cast<sim::Step>(tick.shown_step));
      REQUIRE(view.message_lines.size() == messages.size());
      for (std::size_t i = 0; i < messages.size(); ++i)
        CHECK(view.message_lines[i] ==
              message_clause(run, messages[i]) + " [" + std::to_string(messages[i].bytes) + " B]");
    }
    CHECK(frames_with_messages > 0);
    // Times as the side panel prints them: two decimals in microseconds.
    const std::regex us_time(R"((\d+\.\d+) us)");
    int times = 0;
    for (const std::string& line : act.training->overlap_lines)
      for (auto it = std::sregex_iterator(line.begin(), line.end(), us_time);
           it != std::sregex_iterator(); ++it, ++times) {
        const std::string number = (*it)[1].str();
        CHECK_MESSAGE(number.size() - number.find('.') - 1 == 2, line);
      }
    if (scenario == std::string("ddp_step")) CHECK(times > 0);
  }
  CHECK(seconds_text(5e-6) == "5.00 us");
  CHECK(seconds_text(1.2345e-3) == "1.234 ms");
  CHECK(seconds_text(2.5) == "2.500 s");
}
