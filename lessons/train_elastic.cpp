// Lesson "train_elastic": seed 000's train_elastic.py, the program torchrun
// restarts in the article, on ringlab's DDP (training/):
//   print(f"[{pid}] Initializing process group with: {env_dict}")
//   print(f"[{pid}] (rank = {rank}, local_rank = {local_rank}) train worker starting...")
//   model = ToyModel(); ddp_model = DDP(model); loss_fn = nn.MSELoss()
//   optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)
//   if os.path.exists(ckp_path):
//       print(f"load checkpoint from {ckp_path}")
//       model, optimizer and first_epoch from the checkpoint
//   for i in range(first_epoch, max_epoch):
//       time.sleep(1)
//       outputs = ddp_model(torch.randn(20, 10)); labels = torch.randn(20, 5)
//       loss = loss_fn(outputs, labels); loss.backward()
//       print(f"[{pid}] epoch {i} (rank = {rank}, local_rank = {local_rank}) loss = {loss.item()}")
//       optimizer.step()
//       save_checkpoint(i, model, optimizer, ckp_path)
// It is meant to run under an elastic launcher, which restarts every worker
// when a node joins or leaves or a worker fails (docs/elastic.md):
//   ringlab run --nnodes=1:3 --nproc_per_node=4 --max_restarts=3 --rdzv_id=1
//       --rdzv_backend=c10d --rdzv_endpoint="HOST:1234" --rdzv-conf token_file=job.token
//       ringlab lesson train_elastic --epoch-seconds 1
// (every node gives the job's secret, job.token or RINGLAB_JOB_TOKEN).
// There its world is the launcher's WORLD_SIZE in each round, as every
// lesson's is under a launcher. Alone, it is a lesson like the others: the tcp
// backend starts its 4 ranks (--world-size, --backend as usual).
//
// Which epoch resumes: the article's way. After epoch i's step, rank 0 saves
// the model and the optimizer with "epoch": i (save_checkpoint(i, ...)), and
// a restarted group resumes at the epoch the checkpoint holds
// (first_epoch = checkpoint["epoch"]). So the last epoch saved runs again,
// its update applied a second time on top of the saved model: the article's
// node 0 prints epoch 35, is stopped for node 1 to join, and prints epoch 35
// again. Rank 0 says so when it resumes ("resuming at epoch 35: ..."). A
// worker stopped between printing an epoch and saving it loses that epoch's
// update: the checkpoint still holds the epoch before, which runs again, and
// then the interrupted one.
//
// Other differences from the article's program, and why:
//  - Only rank 0 writes the checkpoint (the article has every rank write the
//    same file), atomically (training/checkpoint.hpp: a temporary file,
//    fsync, rename): a worker killed while saving leaves the previous
//    checkpoint whole, and its hidden temporary file
//    (.checkpoint.pt.tmp-XXXXXX) behind. The format is ringlab's JSON, not
//    torch.save's zip; the keys are the article's model.state_dict() names.
//  - optimizer.zero_grad() runs at the start of every epoch. The article
//    calls it once, before the loop, so its gradients pile up from epoch to
//    epoch, and a restarted worker (which starts from zero gradients) would
//    not go on with the same computation; here model, optimizer and epoch
//    are the whole state.
//  - The samples are not torch.randn's: epoch i on rank r draws its inputs,
//    then its labels, from training::Generator(65536 * i + r) (init.hpp), so
//    a resumed epoch sees the samples it saw before. The model starts from
//    Generator(42) (and DDP's constructor broadcasts rank 0's).
//  - Every rank loads the checkpoint, as in the article, and then the ranks
//    compare the epochs they resume at: a node that does not see the same
//    file (another machine without a shared folder) is an error that says
//    so, instead of ranks training different epochs together.
//  - A checkpoint that does not load (not a ringlab checkpoint, another
//    model, no epoch) is an error on every rank, "rank r: cannot resume from
//    checkpoint 'PATH': ...": under a launcher it is the failure its report
//    shows.
// Options: --max-epoch (default 100), --checkpoint PATH (default
// checkpoint.pt in the current folder, as the article; a second run resumes
// from it, or says that nothing is left to train), --epoch-seconds S (default 0; the article sleeps 1 s so that a
// node can join while it trains), --lr (default 0.001).
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "lessons/training_lesson.hpp"
#include "training/checkpoint.hpp"
#include "training/ddp.hpp"
#include "training/finite.hpp"
#include "training/init.hpp"
#include "training/loss.hpp"
#include "training/sgd.hpp"

namespace ringlab::lessons {

namespace {

// The article's LOCAL_RANK: the launcher's, or the rank for threads of one
// process.
int local_rank_of(ProcessGroup& pg) {
  if (pg.backend() == "inproc") return pg.rank();
  const char* value = std::getenv("LOCAL_RANK");
  return value ? std::atoi(value) : pg.rank();
}

// {'MASTER_ADDR': '127.0.0.1', 'MASTER_PORT': '44901', 'WORLD_SIZE': '4',
// 'LOCAL_WORLD_SIZE': '4'}, as Python prints the article's dict of
// environment variables. Ranks that are threads (inproc) have no master, and
// their world is this process.
std::string environment_dict(ProcessGroup& pg) {
  std::string dict;
  const auto add = [&](const char* key, const std::string& value) {
    dict += (dict.empty() ? "{'" : ", '") + std::string(key) + "': '" + value + "'";
  };
  if (pg.backend() == "inproc") {
    add("WORLD_SIZE", std::to_string(pg.size()));
    add("LOCAL_WORLD_SIZE", std::to_string(pg.size()));
  } else {
    for (const char* key : {"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "LOCAL_WORLD_SIZE"})
      if (const char* value = std::getenv(key)) add(key, value);
  }
  return dict.empty() ? "{}" : dict + "}";
}

// Loads the checkpoint into model and optimizer; returns the epoch to resume
// at. Anything that does not fit is an error naming the file and what to do.
std::int64_t resume(const std::string& path, training::Module& model, training::SGD& optimizer,
                    int rank) {
  using namespace training;
  const std::string cannot =
      "rank " + std::to_string(rank) + ": cannot resume from checkpoint '" + path + "': ";
  const std::string what_to_do = " (remove it to start at epoch 0, or give another --checkpoint)";
  Checkpoint checkpoint;
  try {
    checkpoint = load_checkpoint(path);
  } catch (const CheckpointError& e) {
    throw std::runtime_error(cannot + e.what() + what_to_do);
  }
  try {
    model.load_state_dict(checkpoint.model);
  } catch (const std::invalid_argument& e) {
    // PyTorch's message has a line per kind of key; one line here, so that
    // a launcher's report shows all of it.
    std::string why = e.what();
    for (std::size_t at; (at = why.find("\n\t")) != std::string::npos;) why.replace(at, 2, " ");
    throw std::runtime_error(cannot + "it holds another model than this lesson's ToyModel: " + why +
                             what_to_do);
  }
  if (!checkpoint.optimizer || !checkpoint.epoch)
    throw std::runtime_error(cannot + "it has no " +
                             (checkpoint.optimizer ? "epoch" : "optimizer") +
                             ": train_elastic did not write it" + what_to_do);
  try {
    optimizer.load_state_dict(*checkpoint.optimizer);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(cannot + "its optimizer state does not fit: " + e.what() + what_to_do);
  }
  if (*checkpoint.epoch < 0)
    throw std::runtime_error(cannot + "its epoch is " + std::to_string(*checkpoint.epoch) +
                             what_to_do);
  return *checkpoint.epoch;
}

// Every rank must resume at the same epoch, or DDP would average the
// gradients of different epochs (and the ranks would stop at different
// times). The ranks compare what they found.
void agree_on_first_epoch(ProcessGroup& pg, std::int64_t first_epoch, bool found,
                          const std::string& path) {
  // found ? epoch : -1, one entry per rank.
  const Tensor mine = Tensor::of({found ? first_epoch : std::int64_t{-1}});
  std::vector<Tensor> all(static_cast<std::size_t>(pg.size()), Tensor::zeros(1, DType::Int64));
  pg.all_gather(all, mine);
  std::string seen;
  bool same = true;
  for (int r = 0; r < pg.size(); ++r) {
    const std::int64_t theirs = all[static_cast<std::size_t>(r)].data<std::int64_t>()[0];
    same = same && theirs == mine.data<std::int64_t>()[0];
    seen += (seen.empty() ? "" : ", ") + std::string("rank ") + std::to_string(r) +
            (theirs < 0 ? " found none" : " at epoch " + std::to_string(theirs));
  }
  if (!same)
    throw std::runtime_error("rank " + std::to_string(pg.rank()) +
                             ": the ranks do not resume at the same epoch from checkpoint '" +
                             path + "' (" + seen +
                             "): every node must see the same file; give --checkpoint a path in "
                             "a folder they share");
}

// Why the epoch the checkpoint holds runs again (the file comment).
std::string resuming_line(std::int64_t epoch, const std::string& path) {
  const std::string e = std::to_string(epoch);
  return "resuming at epoch " + e + ": " + path + " was saved after epoch " + e +
         "'s step with \"epoch\": " + e +
         " (the article's save_checkpoint(i, ...)), and training resumes at the epoch it holds, "
         "so epoch " + e + " runs again and its update is applied a second time";
}

}  // namespace

void train_elastic(ProcessGroup& pg, const LessonArgs& args) {
  using namespace training;
  const int rank = pg.rank();
  const int local_rank = local_rank_of(pg);
  const std::string pid = "[" + std::to_string(::getpid()) + "] ";
  const std::string who =
      "(rank = " + std::to_string(rank) + ", local_rank = " + std::to_string(local_rank) + ")";
  print(pid + "Initializing process group with: " + environment_dict(pg));
  print(pid + who + " train worker starting...");

  ToyModel model;
  Generator init(42);
  init_toy_model(model, init);
  DistributedDataParallel ddp_model(model, pg);
  MSELoss loss_fn;
  SGD optimizer(ddp_model.parameters(), {.lr = args.lr.value_or(0.001)});
  optimizer.zero_grad();
  const std::int64_t max_epoch = args.max_epoch.value_or(100);
  std::int64_t first_epoch = 0;
  const std::string path = args.checkpoint.empty() ? "checkpoint.pt" : args.checkpoint;

  const bool found = std::filesystem::exists(path);
  if (found) {
    print("load checkpoint from " + path);
    first_epoch = resume(path, model, optimizer, rank);
  }
  agree_on_first_epoch(pg, first_epoch, found, path);
  if (first_epoch >= max_epoch && rank == 0)
    print(pid + "checkpoint '" + path + "' is at epoch " + std::to_string(first_epoch) +
          " and --max-epoch is " + std::to_string(max_epoch) +
          ": nothing left to train (remove it to start over, or raise --max-epoch)");
  else if (found && rank == 0)
    print(pid + resuming_line(first_epoch, path));

  for (std::int64_t epoch = first_epoch; epoch < max_epoch; ++epoch) {
    // The article's time.sleep(1): time for a node to join mid-run.
    std::this_thread::sleep_for(std::chrono::duration<double>(args.epoch_seconds));
    optimizer.zero_grad();
    Generator data(static_cast<std::uint32_t>(epoch) * 65536u + static_cast<std::uint32_t>(rank));
    const FloatTensor inputs = randn(20, 10, data);
    const FloatTensor labels = randn(20, 5, data);
    const float loss = loss_fn.forward(ddp_model(inputs), labels);
    ddp_model.backward(loss_fn.backward());
    print(pid + "epoch " + std::to_string(epoch) + " " + who + " loss = " + python_float(loss));
    optimizer.step();
    check_step(
        {.rank = rank, .step = "epoch " + std::to_string(epoch), .lr = optimizer.options().lr},
        loss, model.named_parameters());
    if (rank == 0)
      save_checkpoint(
          {.model = model.state_dict(), .optimizer = optimizer.state_dict(), .epoch = epoch},
          path);
  }
}

}  // namespace ringlab::lessons
