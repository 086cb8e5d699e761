// ProcessGroup: torch.distributed's API over any Transport, so a lesson reads
// like the article's Python program:
//
//   pg.all_reduce(tensor, ReduceOp::SUM);      // dist.all_reduce(tensor, op=SUM)
//   Work w = pg.all_reduce_async(tensor);      // dist.all_reduce(..., async_op=True)
//   w.wait();
//
// Each collective runs the algorithm chosen in Options, or else its row's
// default_algorithm (collectives.hpp; all_reduce: auto, as NCCL and MPI
// choose for the caller). Asynchronous calls run in order on one worker
// thread per group; a synchronous call first waits for earlier async ones.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ops/tensor.hpp"
#include "primitives/algorithms.hpp"
#include "primitives/collectives.hpp"
#include "transport/transport.hpp"

namespace ringlab {

// A pending operation (torch.distributed's Work).
class Work {
 public:
  class Impl {
   public:
    virtual ~Impl() = default;
    virtual void wait(Duration timeout) = 0;
    virtual bool is_completed() = 0;
    virtual int source_rank() { return -1; }
  };
  Work() = default;
  explicit Work(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

  // Blocks until done and rethrows the operation's error, if any; throws
  // TimeoutError if it is not done within timeout.
  void wait(Duration timeout = kDefaultTimeout) const;
  bool is_completed() const;
  // A receive's sender once it completed (torch's Work._source_rank()): the
  // rank it was posted for, or for one from kAnySource whichever rank sent
  // the message. -1 for other work, or a receive not complete.
  int source_rank() const;

 private:
  std::shared_ptr<Impl> impl_;
};

struct ProcessGroupOptions {
  // Every wait's limit (the transport's timeout is set to it).
  Duration timeout = kDefaultTimeout;
  // Algorithm per collective by name (see algorithm_names()); missing = the
  // row's default_algorithm (collectives.hpp).
  std::map<Collective, std::string> algorithms;
  // Before each collective, ranks exchange (collective, size, dtype, root, op)
  // so a mismatch fails on every rank with a message naming the ranks, rather
  // than as a size error on some ranks and a timeout on others. Costs one small
  // all_gather per collective; benchmarks turn it off.
  bool check_arguments = true;
};

// The algorithm a group made with these options runs for c: the one named
// there, else ("" or "default" too) the row's default_algorithm. The group
// checks the names when it is made.
std::string algorithm_in_effect(const ProcessGroupOptions& options, Collective c);

class ProcessGroup {
 public:
  explicit ProcessGroup(std::shared_ptr<Transport> transport, ProcessGroupOptions options = {});
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const;
  int size() const;
  std::string_view backend() const;
  Transport& transport() { return *transport_; }
  const ProcessGroupOptions& options() const { return options_; }

  void set_algorithm(Collective c, std::string name);  // validated now
  std::string algorithm(Collective c) const;           // the name in effect

  // Point to point. tag >= 0. src may be kAnySource (dist.recv without src)
  // where the transport receives from any source (inproc, tcp, the
  // simulator's fibers; NCCL and nccl_rules refuse it): recv returns the
  // rank the message came from, as torch's does (src itself when named);
  // irecv's Work says it once complete (source_rank()).
  void send(const Tensor& tensor, int dst, int tag = 0);
  int recv(Tensor& tensor, int src, int tag = 0);
  Work isend(const Tensor& tensor, int dst, int tag = 0);
  Work irecv(Tensor& tensor, int src, int tag = 0);

  // Collectives, named and ordered like torch.distributed. Lists are empty on
  // the ranks where torch takes None.
  void broadcast(Tensor& tensor, int src);
  void scatter(Tensor& tensor, const std::vector<Tensor>& scatter_list, int src);
  void gather(const Tensor& tensor, std::vector<Tensor>& gather_list, int dst);
  void gather(const Tensor& tensor, int dst);  // non-destination ranks
  void reduce(Tensor& tensor, int dst, ReduceOp op = ReduceOp::SUM);
  void all_gather(std::vector<Tensor>& tensor_list, const Tensor& tensor);
  void all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::SUM);
  void reduce_scatter(Tensor& output, const std::vector<Tensor>& input_list,
                      ReduceOp op = ReduceOp::SUM);
  void all_to_all(std::vector<Tensor>& output_list, const std::vector<Tensor>& input_list);
  // Empty split lists mean equal splits of the first dimension.
  void all_to_all_single(Tensor& output, const Tensor& input,
                         const std::vector<std::int64_t>& output_split_sizes = {},
                         const std::vector<std::int64_t>& input_split_sizes = {});
  void barrier();

  // async_op=True versions. The tensors must outlive the Work.
  Work broadcast_async(Tensor& tensor, int src);
  Work scatter_async(Tensor& tensor, const std::vector<Tensor>& scatter_list, int src);
  Work gather_async(const Tensor& tensor, std::vector<Tensor>& gather_list, int dst);
  Work reduce_async(Tensor& tensor, int dst, ReduceOp op = ReduceOp::SUM);
  Work all_gather_async(std::vector<Tensor>& tensor_list, const Tensor& tensor);
  Work all_reduce_async(Tensor& tensor, ReduceOp op = ReduceOp::SUM);
  Work reduce_scatter_async(Tensor& output, const std::vector<Tensor>& input_list,
                            ReduceOp op = ReduceOp::SUM);
  Work all_to_all_async(std::vector<Tensor>& output_list, const std::vector<Tensor>& input_list);
  Work all_to_all_single_async(Tensor& output, const Tensor& input,
                               const std::vector<std::int64_t>& output_split_sizes = {},
                               const std::vector<std::int64_t>& input_split_sizes = {});
  Work barrier_async();

 private:
  struct Signature;
  class Executor;

  // Runs op now (after earlier async work) or queues it; both number it.
  void run_sync(const std::function<void()>& op);
  Work run_async(std::function<void()> op);
  std::uint64_t next_sequence() { return sequence_++; }
  void check_same_everywhere(const Signature& mine);
  std::string prefix(Collective c) const;  // "rank 2: all_reduce: "
  void check_root(Collective c, int root, const char* name) const;
  // The row's runner with the algorithm in effect; `count` as the
  // simulator's Scenario::count, for a transport that observes collectives
  // (collective_observer.hpp).
  void run_collective(Collective c, Comm& comm, const CollectiveCall& call, std::size_t count);
  // The algorithm in effect, auto's choice made for this call.
  std::string algorithm_that_runs(Collective c, const CollectiveCall& call) const;

  void do_broadcast(Tensor& tensor, int src);
  void do_scatter(Tensor& tensor, const std::vector<Tensor>& scatter_list, int src);
  void do_gather(const Tensor& tensor, std::vector<Tensor>* gather_list, int dst);
  void do_reduce(Tensor& tensor, int dst, ReduceOp op);
  void do_all_gather(std::vector<Tensor>& tensor_list, const Tensor& tensor);
  void do_all_reduce(Tensor& tensor, ReduceOp op);
  void do_reduce_scatter(Tensor& output, const std::vector<Tensor>& input_list, ReduceOp op);
  void do_all_to_all(std::vector<Tensor>& output_list, const std::vector<Tensor>& input_list);
  void do_all_to_all_single(Tensor& output, const Tensor& input,
                            const std::vector<std::int64_t>& output_split_sizes,
                            const std::vector<std::int64_t>& input_split_sizes);
  void do_barrier();

  std::shared_ptr<Transport> transport_;
  ProcessGroupOptions options_;
  std::uint64_t sequence_ = 0;
  std::unique_ptr<Executor> executor_;
};

}  // namespace ringlab
