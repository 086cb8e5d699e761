#include "primitives/process_group.hpp"

#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <sstream>
#include <thread>

namespace ringlab {

// ---- Work ------------------------------------------------------------------

void Work::wait(Duration timeout) const {
  if (impl_) impl_->wait(timeout);
}
bool Work::is_completed() const { return !impl_ || impl_->is_completed(); }
int Work::source_rank() const { return impl_ ? impl_->source_rank() : -1; }

namespace {

// Work backed by a future from the group's worker thread.
class FutureWork final : public Work::Impl {
 public:
  FutureWork(std::shared_future<void> future, std::string what)
      : future_(std::move(future)), what_(std::move(what)) {}
  void wait(Duration timeout) override {
    if (future_.wait_for(timeout) != std::future_status::ready)
      throw TimeoutError(what_ + " did not complete within " + std::to_string(timeout.count()) +
                         " ms");
    future_.get();
  }
  bool is_completed() override {
    return future_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }

 private:
  std::shared_future<void> future_;
  std::string what_;
};

// Work backed by a transport request (isend/irecv; src: a receive's source
// as posted, a rank or kAnySource; none for a send).
class RequestWork final : public Work::Impl {
 public:
  explicit RequestWork(std::unique_ptr<Request> request, std::optional<int> src = std::nullopt)
      : request_(std::move(request)), src_(src) {}
  void wait(Duration timeout) override {
    std::lock_guard lock(mutex_);
    if (!done_) request_->wait(timeout);
    done_ = true;
  }
  bool is_completed() override {
    std::lock_guard lock(mutex_);
    return done_ || request_->test();
  }
  int source_rank() override {
    std::lock_guard lock(mutex_);
    // test() first: the request's source() is only read once it is done.
    if (!src_ || !(done_ || request_->test())) return -1;
    return *src_ == kAnySource ? request_->source() : *src_;
  }

 private:
  std::mutex mutex_;
  std::unique_ptr<Request> request_;
  std::optional<int> src_;
  bool done_ = false;
};

Elems elems_of(const Tensor& t) {
  // Collectives write only into tensors passed as non-const; a const tensor's
  // bytes are only sent.
  auto bytes = const_cast<Tensor&>(t).bytes();
  return {bytes.data(), t.numel(), t.dtype()};
}

Tag user_tag(int rank, int tag) {
  if (tag < 0)
    throw std::invalid_argument("rank " + std::to_string(rank) + ": tag must be >= 0, got " +
                                std::to_string(tag));
  return static_cast<Tag>(tag);
}

}  // namespace

// ---- Executor: one worker thread running async collectives in order --------

class ProcessGroup::Executor {
 public:
  ~Executor() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    if (worker_.joinable()) worker_.join();
  }

  std::shared_future<void> submit(std::function<void()> op) {
    std::packaged_task<void()> task(std::move(op));
    std::shared_future<void> future = task.get_future().share();
    {
      std::lock_guard lock(mutex_);
      if (!worker_.joinable()) worker_ = std::thread([this] { loop(); });
      queue_.push_back(std::move(task));
      ++pending_;
    }
    changed_.notify_all();
    return future;
  }

  // Waits until every submitted task has finished (their errors stay in
  // their futures).
  void drain() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return pending_ == 0; });
  }

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    while (true) {
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      auto task = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      task();  // exceptions land in the task's future
      lock.lock();
      --pending_;
      changed_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::packaged_task<void()>> queue_;
  int pending_ = 0;
  bool stopping_ = false;
  std::thread worker_;
};

// ---- ProcessGroup ----------------------------------------------------------

ProcessGroup::ProcessGroup(std::shared_ptr<Transport> transport, ProcessGroupOptions options)
    : transport_(std::move(transport)),
      options_(std::move(options)),
      executor_(std::make_unique<Executor>()) {
  if (!transport_) throw std::invalid_argument("ProcessGroup needs a transport");
  transport_->set_timeout(options_.timeout);
  for (auto& [collective, name] : options_.algorithms) set_algorithm(collective, name);
}

ProcessGroup::~ProcessGroup() = default;

int ProcessGroup::rank() const { return transport_->rank(); }
int ProcessGroup::size() const { return transport_->size(); }
std::string_view ProcessGroup::backend() const { return transport_->name(); }

void ProcessGroup::set_algorithm(Collective c, std::string name) {
  std::vector<std::string> names = algorithm_names(c);
  if (name.empty() || name == "default") name = collective_info(c).default_algorithm;
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    std::string valid;
    for (const auto& n : names) valid += (valid.empty() ? "" : ", ") + n;
    throw std::invalid_argument(prefix(c) + "unknown algorithm '" + name + "': use one of " +
                                valid);
  }
  options_.algorithms[c] = std::move(name);
}

std::string algorithm_in_effect(const ProcessGroupOptions& options, Collective c) {
  auto it = options.algorithms.find(c);
  if (it == options.algorithms.end() || it->second.empty() || it->second == "default")
    return std::string(collective_info(c).default_algorithm);
  return it->second;
}

std::string ProcessGroup::algorithm(Collective c) const { return algorithm_in_effect(options_, c); }

std::string ProcessGroup::prefix(Collective c) const {
  return "rank " + std::to_string(rank()) + ": " + std::string(collective_name(c)) + ": ";
}

void ProcessGroup::check_root(Collective c, int root, const char* name) const {
  if (root >= 0 && root < size()) return;
  throw std::invalid_argument(prefix(c) + name + " = " + std::to_string(root) +
                              " is out of range: the world has ranks 0.." +
                              std::to_string(size() - 1));
}

void ProcessGroup::run_sync(const std::function<void()>& op) {
  executor_->drain();
  op();
}

Work ProcessGroup::run_async(std::function<void()> op) {
  return Work(std::make_shared<FutureWork>(executor_->submit(std::move(op)),
                                           "rank " + std::to_string(rank()) + ": async work"));
}

// ---- argument agreement across ranks ----------------------------------------

struct ProcessGroup::Signature {
  Collective collective;
  std::int64_t count = -1;  // -1: may differ between ranks
  DType dtype = DType::Float32;
  int root = -1;            // -1: no root
  int op = -1;              // -1: no op
};

void ProcessGroup::check_same_everywhere(const Signature& mine) {
  if (!options_.check_arguments || size() == 1) return;
  constexpr std::size_t kFields = 5;
  const auto world = static_cast<std::size_t>(size());
  Tensor table(DType::Int64, {static_cast<std::int64_t>(world * kFields)});
  auto all = table.data<std::int64_t>();
  auto* own = &all[static_cast<std::size_t>(rank()) * kFields];
  own[0] = static_cast<std::int64_t>(mine.collective);
  own[1] = mine.count;
  own[2] = static_cast<std::int64_t>(mine.dtype);
  own[3] = mine.root;
  own[4] = mine.op;
  Comm comm(*transport_, next_sequence());
  const auto blocks = equal_blocks(kFields, size());
  all_gather_ring(comm, elems_of(table), blocks);
  comm.check_finished(collective_name(mine.collective), "the argument check's all_gather ring");

  auto describe = [&](std::size_t r) {
    const std::int64_t* f = &all[r * kFields];
    std::ostringstream out;
    out << "rank " << r << " called "
        << collective_name(static_cast<Collective>(f[0]));
    if (f[1] >= 0) out << " with " << f[1] << " elements";
    out << " of " << dtype_name(static_cast<DType>(f[2]));
    if (f[3] >= 0) out << ", root " << f[3];
    if (f[4] >= 0) out << ", op " << op_name(static_cast<ReduceOp>(f[4]));
    return out.str();
  };
  for (std::size_t r = 0; r < world; ++r) {
    const std::int64_t* theirs = &all[r * kFields];
    for (std::size_t field = 0; field < kFields; ++field) {
      if (theirs[field] == own[field]) continue;
      std::string what = field == 0   ? "the collective"
                         : field == 1 ? "the tensor size"
                         : field == 2 ? "the dtype"
                         : field == 3 ? "the root (src/dst)"
                                      : "the reduce op";
      throw std::invalid_argument(
          prefix(mine.collective) + "the ranks disagree on " + what + ": " +
          describe(static_cast<std::size_t>(rank())) + ", but " + describe(r) +
          "; every rank must make the same call with matching tensors");
    }
  }
}

// ---- point to point ---------------------------------------------------------

void ProcessGroup::send(const Tensor& tensor, int dst, int tag) { isend(tensor, dst, tag).wait(options_.timeout); }
int ProcessGroup::recv(Tensor& tensor, int src, int tag) {
  const Work work = irecv(tensor, src, tag);
  work.wait(options_.timeout);
  return work.source_rank();
}

Work ProcessGroup::isend(const Tensor& tensor, int dst, int tag) {
  transport_->check_peer(dst, "send: dst");
  return Work(std::make_shared<RequestWork>(
      transport_->isend_typed(dst, user_tag(rank(), tag), tensor.bytes(), tensor.dtype())));
}
Work ProcessGroup::irecv(Tensor& tensor, int src, int tag) {
  transport_->check_source(src, "recv: src");
  return Work(std::make_shared<RequestWork>(
      transport_->irecv_typed(src, user_tag(rank(), tag), tensor.bytes(), tensor.dtype()), src));
}

// ---- collectives --------------------------------------------------------------

void ProcessGroup::do_broadcast(Tensor& tensor, int src) {
  check_root(Collective::Broadcast, src, "src");
  check_same_everywhere({Collective::Broadcast, static_cast<std::int64_t>(tensor.numel()),
                         tensor.dtype(), src, -1});
  Comm comm(*transport_, next_sequence());
  run_collective(Collective::Broadcast, comm, {.first = elems_of(tensor), .root = src},
                 tensor.numel());
}

namespace {
// Checks that a list has one tensor per rank, each like `like`.
void check_list(const std::string& prefix, const char* list_name,
                const std::vector<Tensor>& list, const Tensor& like, int world) {
  if (static_cast<int>(list.size()) != world)
    throw std::invalid_argument(prefix + list_name + " has " + std::to_string(list.size()) +
                                " tensors but the world has " + std::to_string(world) +
                                " ranks: pass one tensor per rank");
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i].numel() == like.numel() && list[i].dtype() == like.dtype()) continue;
    throw std::invalid_argument(prefix + list_name + "[" + std::to_string(i) + "] has " +
                                std::to_string(list[i].numel()) + " elements of " +
                                std::string(dtype_name(list[i].dtype())) + " but the tensor has " +
                                std::to_string(like.numel()) + " of " +
                                std::string(dtype_name(like.dtype())) +
                                ": every entry must match the tensor");
  }
}
}  // namespace

void ProcessGroup::do_scatter(Tensor& tensor, const std::vector<Tensor>& scatter_list, int src) {
  const Collective c = Collective::Scatter;
  check_root(c, src, "src");
  const bool is_root = rank() == src;
  if (is_root) check_list(prefix(c), "scatter_list", scatter_list, tensor, size());
  else if (!scatter_list.empty())
    throw std::invalid_argument(prefix(c) + "scatter_list must be empty on non-src ranks (src is " +
                                std::to_string(src) + ")");
  check_same_everywhere({c, static_cast<std::int64_t>(tensor.numel()), tensor.dtype(), src, -1});
  Comm comm(*transport_, next_sequence());
  Comm::Scratch packed;
  Elems send{};
  if (is_root) {
    packed = comm.scratch(tensor.numel() * scatter_list.size(), tensor.dtype());
    for (std::size_t r = 0; r < scatter_list.size(); ++r)
      comm.copy(packed.elems.slice(r * tensor.numel(), tensor.numel()), elems_of(scatter_list[r]));
    send = packed.elems;
  }
  run_collective(c, comm, {.first = send, .second = elems_of(tensor), .root = src}, tensor.numel());
}

void ProcessGroup::do_gather(const Tensor& tensor, std::vector<Tensor>* gather_list, int dst) {
  const Collective c = Collective::Gather;
  check_root(c, dst, "dst");
  const bool is_root = rank() == dst;
  if (is_root) {
    if (!gather_list)
      throw std::invalid_argument(prefix(c) + "the dst rank must pass a gather_list");
    check_list(prefix(c), "gather_list", *gather_list, tensor, size());
  } else if (gather_list && !gather_list->empty()) {
    throw std::invalid_argument(prefix(c) + "gather_list must be empty on non-dst ranks (dst is " +
                                std::to_string(dst) + ")");
  }
  check_same_everywhere({c, static_cast<std::int64_t>(tensor.numel()), tensor.dtype(), dst, -1});
  Comm comm(*transport_, next_sequence());
  Comm::Scratch packed;
  if (is_root) packed = comm.scratch(tensor.numel() * static_cast<std::size_t>(size()), tensor.dtype());
  run_collective(c, comm, {.first = elems_of(tensor), .second = packed.elems, .root = dst},
                 tensor.numel());
  if (is_root)
    for (std::size_t r = 0; r < gather_list->size(); ++r)
      comm.copy(elems_of((*gather_list)[r]), packed.elems.slice(r * tensor.numel(), tensor.numel()));
}

void ProcessGroup::do_reduce(Tensor& tensor, int dst, ReduceOp op) {
  const Collective c = Collective::Reduce;
  check_root(c, dst, "dst");
  check_op(op, tensor.dtype());
  check_same_everywhere({c, static_cast<std::int64_t>(tensor.numel()), tensor.dtype(), dst,
                         static_cast<int>(op)});
  Comm comm(*transport_, next_sequence());
  run_collective(c, comm, {.first = elems_of(tensor), .root = dst, .op = op}, tensor.numel());
}

void ProcessGroup::do_all_reduce(Tensor& tensor, ReduceOp op) {
  const Collective c = Collective::AllReduce;
  check_op(op, tensor.dtype());
  check_same_everywhere({c, static_cast<std::int64_t>(tensor.numel()), tensor.dtype(), -1,
                         static_cast<int>(op)});
  Comm comm(*transport_, next_sequence());
  run_collective(c, comm, {.first = elems_of(tensor), .op = op}, tensor.numel());
}

void ProcessGroup::do_all_gather(std::vector<Tensor>& tensor_list, const Tensor& tensor) {
  const Collective c = Collective::AllGather;
  check_list(prefix(c), "tensor_list", tensor_list, tensor, size());
  check_same_everywhere({c, static_cast<std::int64_t>(tensor.numel()), tensor.dtype(), -1, -1});
  Comm comm(*transport_, next_sequence());
  const std::size_t n = tensor.numel();
  auto packed = comm.scratch(n * static_cast<std::size_t>(size()), tensor.dtype());
  comm.copy(packed.elems.slice(static_cast<std::size_t>(rank()) * n, n), elems_of(tensor));
  const auto blocks = equal_blocks(n, size());
  run_collective(c, comm, {.first = packed.elems, .blocks = blocks}, n);
  for (std::size_t r = 0; r < tensor_list.size(); ++r)
    comm.copy(elems_of(tensor_list[r]), packed.elems.slice(r * n, n));
}

void ProcessGroup::do_reduce_scatter(Tensor& output, const std::vector<Tensor>& input_list,
                                     ReduceOp op) {
  const Collective c = Collective::ReduceScatter;
  check_op(op, output.dtype());
  check_list(prefix(c), "input_list", input_list, output, size());
  check_same_everywhere({c, static_cast<std::int64_t>(output.numel()), output.dtype(), -1,
                         static_cast<int>(op)});
  Comm comm(*transport_, next_sequence());
  const std::size_t n = output.numel();
  auto packed = comm.scratch(n * input_list.size(), output.dtype());
  for (std::size_t r = 0; r < input_list.size(); ++r)
    comm.copy(packed.elems.slice(r * n, n), elems_of(input_list[r]));
  const auto blocks = equal_blocks(n, size());
  run_collective(c, comm, {.first = packed.elems, .blocks = blocks, .op = op}, n);
  comm.copy(elems_of(output), packed.elems.slice(static_cast<std::size_t>(rank()) * n, n));
}

void ProcessGroup::do_all_to_all(std::vector<Tensor>& output_list,
                                 const std::vector<Tensor>& input_list) {
  const Collective c = Collective::AllToAll;
  const auto world = static_cast<std::size_t>(size());
  if (input_list.size() != world || output_list.size() != world)
    throw std::invalid_argument(prefix(c) + "output_list has " +
                                std::to_string(output_list.size()) + " and input_list " +
                                std::to_string(input_list.size()) + " tensors; both need one per rank (" +
                                std::to_string(world) + ")");
  const DType dtype = input_list.front().dtype();
  std::vector<Chunk> send_blocks(world), recv_blocks(world);
  std::size_t send_total = 0, recv_total = 0;
  for (std::size_t r = 0; r < world; ++r) {
    if (input_list[r].dtype() != dtype || output_list[r].dtype() != dtype)
      throw std::invalid_argument(prefix(c) + "all tensors in input_list and output_list must have "
                                  "the same dtype; entry " + std::to_string(r) + " differs");
    send_blocks[r] = {send_total, input_list[r].numel()};
    recv_blocks[r] = {recv_total, output_list[r].numel()};
    send_total += send_blocks[r].count;
    recv_total += recv_blocks[r].count;
  }
  check_same_everywhere({c, -1, dtype, -1, -1});
  Comm comm(*transport_, next_sequence());
  auto send = comm.scratch(send_total, dtype);
  auto recv = comm.scratch(recv_total, dtype);
  for (std::size_t r = 0; r < world; ++r)
    comm.copy(send.elems.slice(send_blocks[r].offset, send_blocks[r].count), elems_of(input_list[r]));
  run_collective(c, comm,
                 {.first = send.elems,
                  .second = recv.elems,
                  .blocks = send_blocks,
                  .second_blocks = recv_blocks},
                 send_blocks.front().count);
  for (std::size_t r = 0; r < world; ++r)
    comm.copy(elems_of(output_list[r]), recv.elems.slice(recv_blocks[r].offset, recv_blocks[r].count));
}

void ProcessGroup::do_all_to_all_single(Tensor& output, const Tensor& input,
                                        const std::vector<std::int64_t>& output_split_sizes,
                                        const std::vector<std::int64_t>& input_split_sizes) {
  const Collective c = Collective::AllToAll;
  const auto world = static_cast<std::size_t>(size());
  if (input.dtype() != output.dtype())
    throw std::invalid_argument(prefix(c) + "input is " + std::string(dtype_name(input.dtype())) +
                                " but output is " + std::string(dtype_name(output.dtype())));
  auto blocks_for = [&](const std::vector<std::int64_t>& splits, const Tensor& t,
                        const char* name) {
    if (splits.empty()) {
      if (t.numel() % world != 0)
        throw std::invalid_argument(prefix(c) + name + " has " + std::to_string(t.numel()) +
                                    " elements, which do not split evenly over " +
                                    std::to_string(world) + " ranks: pass split sizes");
      return equal_blocks(t.numel() / world, size());
    }
    if (splits.size() != world)
      throw std::invalid_argument(prefix(c) + name + " split sizes have " +
                                  std::to_string(splits.size()) + " entries; need one per rank (" +
                                  std::to_string(world) + ")");
    std::vector<Chunk> blocks(world);
    std::size_t offset = 0;
    for (std::size_t r = 0; r < world; ++r) {
      if (splits[r] < 0)
        throw std::invalid_argument(prefix(c) + name + " split size " + std::to_string(r) +
                                    " is negative");
      blocks[r] = {offset, static_cast<std::size_t>(splits[r])};
      offset += blocks[r].count;
    }
    if (offset != t.numel())
      throw std::invalid_argument(prefix(c) + name + " split sizes add up to " +
                                  std::to_string(offset) + " but the tensor has " +
                                  std::to_string(t.numel()) + " elements");
    return blocks;
  };
  auto send_blocks = blocks_for(input_split_sizes, input, "input");
  auto recv_blocks = blocks_for(output_split_sizes, output, "output");
  check_same_everywhere({c, -1, input.dtype(), -1, -1});
  Comm comm(*transport_, next_sequence());
  run_collective(c, comm,
                 {.first = elems_of(input),
                  .second = elems_of(output),
                  .blocks = send_blocks,
                  .second_blocks = recv_blocks},
                 send_blocks.front().count);
}

void ProcessGroup::do_barrier() {
  Comm comm(*transport_, next_sequence());
  run_collective(Collective::Barrier, comm, {}, 0);
}

// ---- sync and async entry points -------------------------------------------

void ProcessGroup::broadcast(Tensor& t, int src) { run_sync([&] { do_broadcast(t, src); }); }
void ProcessGroup::scatter(Tensor& t, const std::vector<Tensor>& l, int src) {
  run_sync([&] { do_scatter(t, l, src); });
}
void ProcessGroup::gather(const Tensor& t, std::vector<Tensor>& l, int dst) {
  run_sync([&] { do_gather(t, &l, dst); });
}
void ProcessGroup::gather(const Tensor& t, int dst) { run_sync([&] { do_gather(t, nullptr, dst); }); }
void ProcessGroup::reduce(Tensor& t, int dst, ReduceOp op) { run_sync([&] { do_reduce(t, dst, op); }); }
void ProcessGroup::all_gather(std::vector<Tensor>& l, const Tensor& t) {
  run_sync([&] { do_all_gather(l, t); });
}
void ProcessGroup::all_reduce(Tensor& t, ReduceOp op) { run_sync([&] { do_all_reduce(t, op); }); }
void ProcessGroup::reduce_scatter(Tensor& out, const std::vector<Tensor>& in, ReduceOp op) {
  run_sync([&] { do_reduce_scatter(out, in, op); });
}
void ProcessGroup::all_to_all(std::vector<Tensor>& out, const std::vector<Tensor>& in) {
  run_sync([&] { do_all_to_all(out, in); });
}
void ProcessGroup::all_to_all_single(Tensor& out, const Tensor& in,
                                     const std::vector<std::int64_t>& out_splits,
                                     const std::vector<std::int64_t>& in_splits) {
  run_sync([&] { do_all_to_all_single(out, in, out_splits, in_splits); });
}
void ProcessGroup::barrier() { run_sync([&] { do_barrier(); }); }

Work ProcessGroup::broadcast_async(Tensor& t, int src) {
  return run_async([this, &t, src] { do_broadcast(t, src); });
}
Work ProcessGroup::scatter_async(Tensor& t, const std::vector<Tensor>& l, int src) {
  return run_async([this, &t, &l, src] { do_scatter(t, l, src); });
}
Work ProcessGroup::gather_async(const Tensor& t, std::vector<Tensor>& l, int dst) {
  return run_async([this, &t, &l, dst] { do_gather(t, &l, dst); });
}
Work ProcessGroup::reduce_async(Tensor& t, int dst, ReduceOp op) {
  return run_async([this, &t, dst, op] { do_reduce(t, dst, op); });
}
Work ProcessGroup::all_gather_async(std::vector<Tensor>& l, const Tensor& t) {
  return run_async([this, &l, &t] { do_all_gather(l, t); });
}
Work ProcessGroup::all_reduce_async(Tensor& t, ReduceOp op) {
  return run_async([this, &t, op] { do_all_reduce(t, op); });
}
Work ProcessGroup::reduce_scatter_async(Tensor& out, const std::vector<Tensor>& in, ReduceOp op) {
  return run_async([this, &out, &in, op] { do_reduce_scatter(out, in, op); });
}
Work ProcessGroup::all_to_all_async(std::vector<Tensor>& out, const std::vector<Tensor>& in) {
  return run_async([this, &out, &in] { do_all_to_all(out, in); });
}
Work ProcessGroup::all_to_all_single_async(Tensor& out, const Tensor& in,
                                           const std::vector<std::int64_t>& out_splits,
                                           const std::vector<std::int64_t>& in_splits) {
  return run_async([this, &out, &in, out_splits, in_splits] {
    do_all_to_all_single(out, in, out_splits, in_splits);
  });
}
Work ProcessGroup::barrier_async() {
  return run_async([this] { do_barrier(); });
}

}  // namespace ringlab
