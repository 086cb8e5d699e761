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
     .world_problem = two_ranks_of_pingpong},
    {.name = "pingpong_async",
     .teaches = "isend/irecv: the same ping-pong with Work handles",
     .default_world_size = 2,
     .run = pingpong_async,
     .world_problem = two_ranks_of_pingpong},
    {.name = "broadcast",
     .teaches = "broadcast: everyone gets the src rank's tensor",
     .default_world_size = 4,
     .run = broadcast,
     .collective = Collective::Broadcast,
     .root = "src"},
    {.name = "scatter",
     .teaches = "scatter: the src rank hands entry r of its list to rank r",
     .default_world_size = 4,
     .run = scatter,
     .collective = Collective::Scatter,
     .root = "src"},
    {.name = "gather",
     .teaches = "gather: the dst rank collects every rank's tensor",
     .default_world_size = 4,
     .run = gather,
     .collective = Collective::Gather,
     .root = "dst"},
    // The partial sums the article prints on the other ranks are Gloo's ring's.
    {.name = "reduce",
     .teaches = "reduce: the dst rank gets the sum; the others keep Gloo's partial sums",
     .default_world_size = 4,
     .run = reduce,
     .collective = Collective::Reduce,
     .algorithm = "gloo_ring",
     .root = "dst"},
    {.name = "all_gather",
     .teaches = "all_gather: everyone collects every rank's tensor",
     .default_world_size = 4,
     .run = all_gather,
     .collective = Collective::AllGather},
    // The article teaches the ring all-reduce; the process group's default
    // is auto.
    {.name = "all_reduce",
     .teaches = "all_reduce: everyone gets the sum",
     .default_world_size = 4,
     .run = all_reduce,
     .collective = Collective::AllReduce,
     .algorithm = "ring"},
    {.name = "reduce_scatter",
     .teaches = "reduce_scatter: the sum, cut in parts, one part per rank",
     .default_world_size = 4,
     .run = reduce_scatter,
     .collective = Collective::ReduceScatter},
    {.name = "all_to_all",
     .teaches = "all_to_all: entry j of rank r goes to rank j (a transpose)",
     .default_world_size = 4,
     .run = all_to_all,
     .collective = Collective::AllToAll},
    {.name = "barrier",
     .teaches = "barrier: nobody passes until everybody has arrived",
     .default_world_size = 4,
     .run = barrier,
     .collective = Collective::Barrier},
    {.name = "ddp_init_broadcast",
     .teaches = "DDP's constructor broadcasts rank 0's weights to every rank",
     .default_world_size = 2,
     .run = ddp_init_broadcast},
    {.name = "ddp_grad_average",
     .teaches = "DDP averages gradients over processes: 14.0 on 2 ranks, 7.0 for the same samples "
                "on 4",
     .default_world_size = 2,
     .run = ddp_grad_average,
     .world_problem = four_samples_problem,
     .then_world_size = 4},
    {.name = "ddp_basic",
     .teaches = "seed 004's demo_basic as the tutorial runs it: one DDP step of ToyModel, "
                "PyTorch's numbers",
     .default_world_size = 2,
     .run = ddp_basic},
    {.name = "ddp_checkpoint",
     .teaches = "save on rank 0, barrier, load on every rank, then train",
     .default_world_size = 2,
     .run = ddp_checkpoint},
    {.name = "model_parallel",
     .teaches = "ToyMpModel: net1 on device dev0, net2 on dev1 of one process, the activations "
                "copied between",
     .default_world_size = 1,
     .run = model_parallel},
    {.name = "demo_model_parallel",
     .teaches = "seed 004's demo_model_parallel: ToyMpModel in every process, DDP across them",
     .default_world_size = 4,
     .run = demo_model_parallel},
    {.name = "horovod",
     .teaches = "Horovod's recipe: lr x size, broadcast, fused gradient averaging",
     .default_world_size = 4,
     .run = horovod},
    {.name = "train",
     .teaches = "a deterministic DDP run to check by hand or against PyTorch",
     .default_world_size = 2,
     .run = train},
    {.name = "train_elastic",
     .teaches = "seed 000's elastic training: DDP, a checkpoint every epoch, resumed after every "
                "restart; made for ringlab run --nnodes 1:3 (docs/elastic.md), so not in the tour",
     .default_world_size = 4,
     .run = train_elastic,
     .world_from_launcher = true,
     .not_in_tour = "alone it trains 100 epochs, 400 lines of losses; see docs/elastic.md for the "
                    "two-node demo, or try ringlab lesson train_elastic --max-epoch 3 --checkpoint "
                    "/tmp/c.pt"},
    {.name = "support",
     .teaches = "seed 001's table of which backend runs which operation, with ringlab's "
                "backends run here",
     .default_world_size = 4,
     .run = nullptr,
     .world_problem = support_world_problem,
     .run_itself = support},
};
}  // namespace

std::span<const Lesson> all_lessons() { return kLessons; }

const Lesson& find_lesson(std::string_view name) {
  for (const Lesson& lesson : kLessons)
    if (lesson.name == name) return lesson;
  std::string valid;
  for (const Lesson& lesson : kLessons) valid += (valid.empty() ? "" : ", ") + std::string(lesson.name);
  throw std::invalid_argument("unknown lesson '" + std::string(name) + "': use one of " + valid +
                              " (ringlab lesson --list)");
}

}  // namespace ringlab::lessons
