#include "training_sim/recorded_step.hpp"

#include <algorithm>
#include <functional>
#include <mutex>
#include <stdexcept>

#include "primitives/algorithms.hpp"
#include "primitives/process_group.hpp"
#include "simulator/build_record.hpp"
#include "simulator/recording_transport.hpp"
#include "training/ddp.hpp"
#include "training/horovod.hpp"
#include "training/loss.hpp"
#include "training/sgd.hpp"
#include "transport/inproc.hpp"

namespace ringlab::training {

namespace {

constexpr int kMaxRanks = 16;
constexpr int kSamples = 2;

// A rank's process group talks through this. Until start() it forwards to the
// rank's own transport unrecorded (the synchronizer's constructor), then to
// the recorder. A buffer announced with name_when_touched() is named for the
// recorder just before the first operation that touches it: that runs on the
// thread doing the all_reduces, in their program order, so the buffer is
// named with the gradients it holds when its all_reduce begins and the
// record's regions come out the same however the threads interleave.
class StepTransport final : public Transport {
 public:
  StepTransport(Transport& inner, sim::RecordingTransport& recording)
      : inner_(inner), recording_(recording) {}

  void start() { recording_on_ = true; }  // before any asynchronous work

  // Called from the rank's own thread while its worker may be communicating.
  void name_when_touched(ConstBytes memory, std::string name) {
    std::lock_guard lock(mutex_);
    pending_.push_back({memory, std::move(name)});
  }

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  std::string_view name() const override { return inner_.name(); }
  MemoryKind memory() const override { return inner_.memory(); }

  std::unique_ptr<Request> isend(int dst, Tag tag, ConstBytes data) override {
    return target({data}).isend(dst, tag, data);
  }
  std::unique_ptr<Request> irecv(int src, Tag tag, MutBytes data) override {
    return target({data}).irecv(src, tag, data);
  }
  Buffer allocate(std::size_t bytes) override { return target({}).allocate(bytes); }
  void copy(MutBytes dst, ConstBytes src) override { target({dst, src}).copy(dst, src); }
  void reduce(DType dtype, ReduceOp op, MutBytes acc, ConstBytes in) override {
    target({acc, in}).reduce(dtype, op, acc, in);
  }
  void divide(DType dtype, MutBytes data, int world_size) override {
    target({data}).divide(dtype, data, world_size);
  }

 private:
  struct Pending {
    ConstBytes memory;
    std::string name;
  };

  static bool overlaps(ConstBytes a, ConstBytes b) {
    return !a.empty() && !b.empty() && a.data() < b.data() + b.size() &&
           b.data() < a.data() + a.size();
  }

  // The transport to use for an operation on `touched`, after naming the
  // announced buffers among them.
  Transport& target(std::initializer_list<ConstBytes> touched) {
    if (!recording_on_) return inner_;
    std::lock_guard lock(mutex_);
    for (auto it = pending_.begin(); it != pending_.end();) {
      const bool touches = std::any_of(touched.begin(), touched.end(),
                                       [&](ConstBytes t) { return overlaps(t, it->memory); });
      if (!touches) {
        ++it;
        continue;
      }
      recording_.name_buffer(it->memory, it->name, DType::Float32, /*is_input=*/true);
      it = pending_.erase(it);
    }
    return recording_;
  }

  Transport& inner_;
  sim::RecordingTransport& recording_;
  bool recording_on_ = false;
  std::mutex mutex_;
  std::vector<Pending> pending_;
};

std::vector<float> copy_of(const FloatTensor& t) { return {t.values().begin(), t.values().end()}; }

Values values_of(Module& model) {
  Values values;
  for (const NamedParameter& p : model.named_parameters())
    values.push_back(copy_of(p.parameter->value));
  return values;
}

Values gradients_of(Module& model) {
  Values values;
  for (const NamedParameter& p : model.named_parameters())
    values.push_back(copy_of(p.parameter->grad));
  return values;
}

void check(const StepScenario& s) {
  if (s.ranks < 1 || s.ranks > kMaxRanks)
    throw std::invalid_argument("training step: ranks = " + std::to_string(s.ranks) +
                                " is out of range: pick 1 to 16");
  if (s.bucket_floats < 1)
    throw std::invalid_argument(
        "training step: the bucket cap must hold at least one gradient value");
  if (!(s.lr > 0)) throw std::invalid_argument("training step: the learning rate must be > 0");
  const std::vector<std::string> names = algorithm_names(Collective::AllReduce);
  if (std::find(names.begin(), names.end(), s.algorithm) == names.end()) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    throw std::invalid_argument("training step: unknown all_reduce algorithm '" + s.algorithm +
                                "': pick one of " + list);
  }
}

}  // namespace

std::unique_ptr<Sequential> walkthrough_model(int rank) {
  auto model = std::make_unique<Sequential>("TinyModel");
  // Each layer's two weights, rank 0's; rank r adds 0.25 r to every one.
  const float weights[4][2] = {{1.0f, 0.5f}, {0.5f, 1.0f}, {1.0f, -0.5f}, {0.5f, 0.5f}};
  const std::int64_t widths[5] = {1, 2, 1, 2, 1};
  for (int layer = 0; layer < 4; ++layer) {
    auto linear = std::make_unique<Linear>(widths[layer], widths[layer + 1], /*bias=*/false);
    for (std::size_t i = 0; i < 2; ++i)
      linear->weight.value[i] = weights[layer][i] + 0.25f * static_cast<float>(rank);
    model->add("net" + std::to_string(layer + 1), std::move(linear));
  }
  return model;
}

FloatTensor walkthrough_inputs(int rank) {
  FloatTensor x = FloatTensor::matrix(kSamples, 1);
  for (int k = 0; k < kSamples; ++k) x.at(k, 0) = static_cast<float>(1 + 2 * rank + k);
  return x;
}

FloatTensor walkthrough_targets(int rank) {
  (void)rank;
  FloatTensor y = FloatTensor::matrix(kSamples, 1);
  y.fill(2.0f);
  return y;
}

std::string bucket_region_name(GradientSync sync, int bucket) {
  return (sync == GradientSync::Ddp ? "bucket " : "fusion buffer ") + std::to_string(bucket);
}

namespace {

// What one rank records: its compute side in `out`, its buckets, its log.
struct RankOutput {
  RankRecord& out;
  std::vector<GradientBucket>& buckets;
  sim::RankLog& log;
};

// Forward, backward and step() through DistributedDataParallel, its buckets
// all-reduced as backward fills them.
void ddp_step(Module& model, ProcessGroup& pg, StepTransport& transport, double lr,
              std::size_t cap_bytes, const std::function<void(int, const Tensor&)>& issued,
              RankOutput& rank) {
  const FloatTensor x = walkthrough_inputs(pg.rank());
  const FloatTensor y = walkthrough_targets(pg.rank());
  MSELoss loss_fn;
  DdpOptions ddp_options;
  ddp_options.bucket_cap_mb = static_cast<double>(cap_bytes) / (1024.0 * 1024.0);
  ddp_options.first_bucket_bytes = cap_bytes;
  DistributedDataParallel ddp(model, pg, ddp_options);
  rank.out.before = values_of(model);
  for (const DdpBucket& b : ddp.buckets())
    rank.buckets.push_back({b.parameters, b.offsets, b.numel});
  ddp.set_bucket_hook(issued);
  SGD optimizer(ddp.parameters(), {.lr = lr});
  optimizer.zero_grad();
  transport.start();
  rank.out.loss = loss_fn.forward(ddp.forward(x), y);
  ddp.backward(loss_fn.backward());
  optimizer.step();
}

// The same through the Horovod-style DistributedOptimizer: fusion buffers
// issued as they fill, the last one by step(). `backward_done` is set
// between backward and step().
void horovod_step(Module& model, ProcessGroup& pg, StepTransport& transport, double lr,
                  std::size_t cap_bytes, const std::function<void(int, const Tensor&)>& issued,
                  bool& backward_done, RankOutput& rank) {
  const FloatTensor x = walkthrough_inputs(pg.rank());
  const FloatTensor y = walkthrough_targets(pg.rank());
  MSELoss loss_fn;
  const std::vector<NamedParameter> params = model.named_parameters();
  hvd::Horovod hvd = hvd::init(pg);
  hvd::broadcast_parameters(hvd, model, 0);
  rank.out.before = values_of(model);
  SGD sgd(model.parameters(), {.lr = lr});
  hvd::DistributedOptimizer optimizer(hvd, sgd, model.named_parameters(),
                                      {.fusion_threshold_bytes = cap_bytes});
  optimizer.set_fusion_hook([&](const hvd::Fusion& fusion, const Tensor& buffer) {
    GradientBucket bucket;
    for (const std::string& name : fusion.tensors) {
      const auto at = std::find_if(params.begin(), params.end(),
                                   [&](const NamedParameter& p) { return p.name == name; });
      bucket.parameters.push_back(static_cast<int>(at - params.begin()));
      bucket.offsets.push_back(bucket.numel);
      bucket.numel += at->parameter->value.numel();
    }
    rank.buckets.push_back(std::move(bucket));
    issued(static_cast<int>(rank.buckets.size()) - 1, buffer);
  });
  optimizer.zero_grad();
  transport.start();
  rank.out.loss = loss_fn.forward(model.forward(x), y);
  model.backward(loss_fn.backward());
  backward_done = true;
  optimizer.step();
}

// One rank of the step, on its thread: the model, its hooks noting each
// gradient and each issued all_reduce, the step, what it ended with.
void record_rank(const StepScenario& scenario, double lr, Transport& inner, RankOutput rank) {
  sim::RecordingTransport recording(inner, {.values = true});
  auto transport = std::make_shared<StepTransport>(inner, recording);
  ProcessGroupOptions options;
  options.check_arguments = false;  // only the all_reduces: what the walkthrough shows
  options.algorithms[Collective::AllReduce] = scenario.algorithm;
  ProcessGroup pg(transport, options);

  std::unique_ptr<Sequential> model = walkthrough_model(inner.rank());
  const std::vector<NamedParameter> params = model->named_parameters();
  RankRecord& out = rank.out;
  out.initial = values_of(*model);
  out.local_gradients.resize(params.size());
  // Added before the synchronizer's hooks, so each gradient is noted before
  // the synchronizer acts on it (and maybe issues an all_reduce).
  for (std::size_t k = 0; k < params.size(); ++k)
    params[k].parameter->add_grad_hook([&out, k](Parameter& p) {
      out.events.push_back({StepEvent::Kind::GradientReady, static_cast<int>(k)});
      out.local_gradients[k] = copy_of(p.grad);
    });
  out.inputs = copy_of(walkthrough_inputs(inner.rank()));
  out.targets = copy_of(walkthrough_targets(inner.rank()));
  bool backward_done = false;
  auto issued = [&](int bucket, const Tensor& buffer) {
    out.events.push_back({StepEvent::Kind::AllReduceIssued, bucket, backward_done});
    transport->name_when_touched(buffer.bytes(), bucket_region_name(scenario.sync, bucket));
  };
  const std::size_t cap_bytes = scenario.bucket_floats * sizeof(float);
  if (scenario.sync == GradientSync::Ddp)
    ddp_step(*model, pg, *transport, lr, cap_bytes, issued, rank);
  else
    horovod_step(*model, pg, *transport, lr, cap_bytes, issued, backward_done, rank);
  out.averaged_gradients = gradients_of(*model);
  out.after = values_of(*model);
  rank.log = recording.take_log();
}

// Every rank filled the same buckets: they are the step's.
std::vector<GradientBucket> same_buckets(const std::vector<std::vector<GradientBucket>>& of_rank) {
  for (std::size_t r = 1; r < of_rank.size(); ++r) {
    bool same = of_rank[r].size() == of_rank[0].size();
    for (std::size_t b = 0; same && b < of_rank[r].size(); ++b)
      same = of_rank[r][b].parameters == of_rank[0][b].parameters;
    if (!same)
      throw std::logic_error("training step: rank " + std::to_string(r) +
                             " filled other buckets than rank 0");
  }
  return of_rank[0];
}

}  // namespace

RecordedStep record_training_step(const StepScenario& scenario) {
  check(scenario);
  const int world = scenario.ranks;
  RecordedStep step;
  step.scenario = scenario;
  step.lr = scenario.sync == GradientSync::Horovod ? scenario.lr * world : scenario.lr;
  for (const NamedParameter& p : walkthrough_model(0)->named_parameters()) {
    step.parameter_names.push_back(p.name);
    step.parameter_sizes.push_back(p.parameter->value.numel());
  }
  step.ranks.resize(static_cast<std::size_t>(world));
  std::vector<std::vector<GradientBucket>> buckets(static_cast<std::size_t>(world));
  std::vector<sim::RankLog> logs(static_cast<std::size_t>(world));
  run_world(world, [&](Transport& inner) {
    const auto r = static_cast<std::size_t>(inner.rank());
    record_rank(scenario, step.lr, inner, {step.ranks[r], buckets[r], logs[r]});
  });
  step.buckets = same_buckets(buckets);

  sim::RunInfo info;
  info.operation = scenario.sync == GradientSync::Ddp ? "ddp_step" : "horovod_step";
  info.algorithm = scenario.algorithm;
  info.dtype = DType::Float32;
  info.op = ReduceOp::SUM;
  std::size_t gradients = 0;
  for (std::size_t n : step.parameter_sizes) gradients += n;
  info.count = gradients;
  info.values_recorded = true;
  step.run = sim::build_run(std::move(logs), std::move(info));
  for (int r = 0; r < world; ++r)
    for (std::size_t b = 0; b < step.buckets.size(); ++b) {
      const int region =
          step.run.buffer_of(r, bucket_region_name(scenario.sync, static_cast<int>(b)));
      step.ranks[static_cast<std::size_t>(r)].bucket_regions.push_back(region);
    }
  return step;
}

}  // namespace ringlab::training
