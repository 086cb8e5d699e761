#include <stdexcept>
#include <string>

#include "lessons/lesson.hpp"

namespace ringlab::lessons {

void pingpong(ProcessGroup&, const LessonArgs&);
void pingpong_async(ProcessGroup&, const LessonArgs&);
void broadcast(ProcessGroup&, const LessonArgs&);
void scatter(ProcessGroup&, const LessonArgs&);
void gather(ProcessGroup&, const LessonArgs&);
void reduce(ProcessGroup&, const LessonArgs&);
void all_gather(ProcessGroup&, const LessonArgs&);
void all_reduce(ProcessGroup&, const LessonArgs&);
void reduce_scatter(ProcessGroup&, const LessonArgs&);
void all_to_all(ProcessGroup&, const LessonArgs&);
void barrier(ProcessGroup&, const LessonArgs&);
void ddp_init_broadcast(ProcessGroup&, const LessonArgs&);
void ddp_grad_average(ProcessGroup&, const LessonArgs&);
void ddp_basic(ProcessGroup&, const LessonArgs&);
void ddp_checkpoint(ProcessGroup&, const LessonArgs&);
void model_parallel(ProcessGroup&, const LessonArgs&);
void demo_model_parallel(ProcessGroup&, const LessonArgs&);
void horovod(ProcessGroup&, const LessonArgs&);
void train(ProcessGroup&, const LessonArgs&);
void train_elastic(ProcessGroup&, const LessonArgs&);
std::string four_samples_problem(int world);
void support(const RunOptions&);
std::string support_world_problem(int world);

namespace {

std::string two_ranks_of_pingpong(int world) {
  if (world == 2) return "";
  return "the article's ping-pong passes a tensor between rank 0 and rank 1: it needs exactly 2 "
         "ranks (-n 2)";
}

constexpr Lesson kLessons[] = {
    {.name = "pingpong",
     .teaches = "send/recv: two ranks pass a tensor back and forth",
     .default_world_size = 2,
     .run = pingpong,
     .world_problem = two_ranks_of_pingpong,
     .look = {"rank 0 sends tensor(1.) to rank 1, which adds 1 and sends it back: the values say "
              "who held what, when",
              "each rank prints its own lines, so the two ranks' lines may come in another order"},
     .try_next = "ringlab lesson pingpong_async",
     .takes_dtype = true},
    {.name = "pingpong_async",
     .teaches = "isend/irecv: the same ping-pong with Work handles",
     .default_world_size = 2,
     .run = pingpong_async,
     .world_problem = two_ranks_of_pingpong,
     .look = {"isend and irecv return at once, with a Work; wait() is where a rank blocks",
              "the values are pingpong's: only the waiting moved"},
     .try_next = "ringlab exercise start ping_pong",
     .takes_dtype = true},
    {.name = "broadcast",
     .teaches = "broadcast: everyone gets the src rank's tensor",
     .default_world_size = 4,
     .run = broadcast,
     .collective = Collective::Broadcast,
     .root = "src",
     .look =
         {"after the call every rank holds the src rank's tensor([1, 2])",
          "binomial: the src sends in ceil(log2 P) rounds, and every rank that has it forwards it"},
     .try_next = "ringlab lesson broadcast -n 8 --root 5",
     .takes_dtype = true},
    {.name = "scatter",
     .teaches = "scatter: the src rank hands entry r of its list to rank r",
     .default_world_size = 4,
     .run = scatter,
     .collective = Collective::Scatter,
     .root = "src",
     .look = {"only the src rank has a list; entry r of it lands on rank r",
              "every rank's own tensor is overwritten: scatter writes into it"},
     .try_next = "ringlab lesson scatter -n 6 --root 2",
     .takes_dtype = true},
    {.name = "gather",
     .teaches = "gather: the dst rank collects every rank's tensor",
     .default_world_size = 4,
     .run = gather,
     .collective = Collective::Gather,
     .root = "dst",
     .look = {"the dst rank's gather_list holds every rank's tensor, in rank order",
              "the other ranks pass no list (torch's None) and keep their tensor"},
     .try_next = "ringlab lesson gather -n 6 --root 3",
     .takes_dtype = true},
    // The partial sums the article prints on the other ranks are Gloo's ring's.
    {.name = "reduce",
     .teaches = "reduce: the dst rank gets the sum; the others keep Gloo's partial sums",
     .default_world_size = 4,
     .run = reduce,
     .collective = Collective::Reduce,
     .algorithm = "gloo_ring",
     .root = "dst",
     .look =
         {"the dst rank 3 holds the sum tensor([16, 20]); the other ranks keep partial sums",
          "rank 2's [12, 14] is ranks 2 + 3: Gloo's segmented ring adds toward the lower ranks"},
     .try_next = "ringlab lesson reduce -n 6 --root 2",
     .takes_dtype = true},
    {.name = "all_gather",
     .teaches = "all_gather: everyone collects every rank's tensor",
     .default_world_size = 4,
     .run = all_gather,
     .collective = Collective::AllGather,
     .look = {"every rank ends with the same list: each rank's tensor, in rank order",
              "the ring passes one block to the right per step: P - 1 steps"},
     .try_next = "ringlab lesson all_gather --algorithm all_gather=recursive_doubling",
     .takes_dtype = true},
    // The article teaches the ring all-reduce; the process group's default
    // is auto.
    {.name = "all_reduce",
     .teaches = "all_reduce: everyone gets the sum",
     .default_world_size = 4,
     .run = all_reduce,
     .collective = Collective::AllReduce,
     .algorithm = "ring",
     .look = {"every rank ends with the same sum tensor([16, 20])",
              "the ring: a reduce-scatter, then an all-gather, 2(P - 1) steps in all"},
     .try_next = "ringlab sim all_reduce --algo ring --ranks 4 --count 4 --dtype int64",
     .takes_dtype = true},
    {.name = "reduce_scatter",
     .teaches = "reduce_scatter: the sum, cut in parts, one part per rank",
     .default_world_size = 4,
     .run = reduce_scatter,
     .collective = Collective::ReduceScatter,
     .look = {"rank r ends with part r of the sum over the ranks' input lists",
              "each rank sends P - 1 partial sums around the ring, one part per step"},
     .try_next = "ringlab exercise start ring_reduce_scatter"},
    {.name = "all_to_all",
     .teaches = "all_to_all: entry j of rank r goes to rank j (a transpose)",
     .default_world_size = 4,
     .run = all_to_all,
     .collective = Collective::AllToAll,
     .look = {"entry j of rank r's input list goes to rank j: the lists are transposed",
              "pairwise: in step s rank r sends to r + s and receives from r - s"},
     .try_next = "ringlab lesson all_to_all -n 3"},
    {.name = "barrier",
     .teaches = "barrier: nobody passes until everybody has arrived",
     .default_world_size = 4,
     .run = barrier,
     .collective = Collective::Barrier,
     .look = {"no rank prints after barrier before every rank has printed before barrier",
              "dissemination: ceil(log2 P) rounds of empty messages, round k to rank r + 2^k"},
     .try_next = "ringlab exercise start dissemination_barrier"},
    {.name = "ddp_init_broadcast",
     .teaches = "DDP's constructor broadcasts rank 0's weights to every rank",
     .default_world_size = 2,
     .run = ddp_init_broadcast,
     .look = {"rank 1 starts with the weight 1.0, and after DDP's constructor holds rank 0's 0.0",
              "DDP broadcasts rank 0's parameters, so every replica starts the same"},
     .try_next = "ringlab lesson ddp_grad_average"},
    {.name = "ddp_grad_average",
     .teaches = "DDP averages gradients over processes: 14.0 on 2 ranks, 7.0 for the same samples "
                "on 4",
     .default_world_size = 2,
     .run = ddp_grad_average,
     .world_problem = four_samples_problem,
     .then_world_size = 4,
     .look = {"each rank's local gradient differs; after backward every rank holds their average",
              "on 4 ranks the same samples give 7.0: DDP divides the sum by the world size"},
     .try_next = "ringlab lesson ddp_grad_average -n 1"},
    {.name = "ddp_basic",
     .teaches = "seed 004's demo_basic as the tutorial runs it: one DDP step of ToyModel, "
                "PyTorch's numbers",
     .default_world_size = 2,
     .run = ddp_basic,
     .look =
         {"the buckets: backward fills them from the last layer to the first",
          "every rank prints the loss and parameters PyTorch prints for the tutorial's program"},
     .try_next = "ringlab lesson demo_model_parallel"},
    {.name = "ddp_checkpoint",
     .teaches = "save on rank 0, barrier, load on every rank, then train",
     .default_world_size = 2,
     .run = ddp_checkpoint,
     .look =
         {"rank 0 saves, the barrier holds the others back, then every rank loads the same state",
          "after the step every rank's parameters are the same again"},
     .try_next = "ringlab lesson ddp_checkpoint --checkpoint model.checkpoint"},
    {.name = "model_parallel",
     .teaches = "ToyMpModel: net1 on device dev0, net2 on dev1 of one process, the activations "
                "copied between",
     .default_world_size = 1,
     .run = model_parallel,
     .look = {"net1 runs on cpu:0, net2 on cpu:1: the activations cross once forward, their "
              "gradient once back",
              "the loss and the step are the one-device ToyModel's, PyTorch's numbers"},
     .try_next = "ringlab lesson demo_model_parallel"},
    {.name = "demo_model_parallel",
     .teaches = "seed 004's demo_model_parallel: ToyMpModel in every process, DDP across them",
     .default_world_size = 4,
     .run = demo_model_parallel,
     .look = {"each process splits ToyMpModel over its own two devices, 2r and 2r + 1",
              "DDP averages the gradients across the processes: every rank ends with the same "
              "parameters"},
     .try_next = "ringlab lesson demo_model_parallel -n 2"},
    {.name = "horovod",
     .teaches = "Horovod's recipe: lr x size, broadcast, fused gradient averaging",
     .default_world_size = 4,
     .run = horovod,
     .look = {"before broadcast_parameters every rank's weights differ; after, they are rank 0's",
              "rank 0 keeps a checkpoint each epoch in ringlab-runs/horovod and prints where"},
     .try_next = "HOROVOD_FUSION_THRESHOLD=300 ringlab lesson horovod"},
    {.name = "train",
     .teaches = "a deterministic DDP run to check by hand or against PyTorch",
     .default_world_size = 2,
     .run = train,
     .look = {"both ranks print the same parameters after every step: DDP averaged the gradients",
              "the numbers match PyTorch's DDP to 1e-6 (tests/golden/)"},
     .try_next = "ringlab lesson train --lr 0.05 --steps 5"},
    {.name = "train_elastic",
     .teaches = "seed 000's elastic training: DDP, a checkpoint every epoch, resumed after every "
                "restart; made for ringlab run --nnodes 1:3 (docs/elastic.md), so not in the tour",
     .default_world_size = 4,
     .run = train_elastic,
     .not_in_tour = "alone it trains 100 epochs, 400 lines of losses; see docs/elastic.md for the "
                    "two-node demo, or try ringlab lesson train_elastic --max-epoch 3 --checkpoint "
                    "/tmp/c.pt",
     .try_next = "ringlab lesson train_elastic --max-epoch 3 --checkpoint c.pt"},
    {.name = "support",
     .teaches = "seed 001's table of which backend runs which operation, with ringlab's "
                "backends run here",
     .default_world_size = 4,
     .run = nullptr,
     .world_problem = support_world_problem,
     .run_itself = support,
     .look = {"a column per backend: which operations each can run",
              "ringlab's columns are run here, on every backend this build has"},
     .try_next = "ringlab lesson support -n 2"},
};
}  // namespace

std::span<const Lesson> all_lessons() { return kLessons; }

const Lesson& find_lesson(std::string_view name) {
  for (const Lesson& lesson : kLessons)
    if (lesson.name == name) return lesson;
  std::string valid;
  for (const Lesson& lesson : kLessons)
    valid += (valid.empty() ? "" : ", ") + std::string(lesson.name);
  throw std::invalid_argument("unknown lesson '" + std::string(name) + "': use one of " + valid +
                              " (ringlab lesson --list)");
}

}  // namespace ringlab::lessons
