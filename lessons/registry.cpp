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
void horovod(ProcessGroup&, const LessonArgs&);
void train(ProcessGroup&, const LessonArgs&);
std::string four_samples_problem(int world);
std::string two_ranks_problem(int world);

namespace {

std::string at_least_two_problem(int world) {
  return world >= 2 ? "" : "rank 0 and rank 1 pass the tensor: it needs at least 2 ranks";
}

constexpr Lesson kLessons[] = {
    {"pingpong", "send/recv: two ranks pass a tensor back and forth", 2, pingpong, std::nullopt,
     "", at_least_two_problem},
    {"pingpong_async", "isend/irecv: the same ping-pong with Work handles", 2, pingpong_async,
     std::nullopt, "", at_least_two_problem},
    {"broadcast", "broadcast: everyone gets the src rank's tensor", 4, broadcast,
     Collective::Broadcast},
    {"scatter", "scatter: the src rank hands entry r of its list to rank r", 4, scatter,
     Collective::Scatter},
    {"gather", "gather: the dst rank collects every rank's tensor", 4, gather, Collective::Gather},
    // The partial sums the article prints on the other ranks are Gloo's ring's.
    {"reduce", "reduce: the dst rank gets the sum; the others keep Gloo's partial sums", 4, reduce,
     Collective::Reduce, "gloo_ring"},
    {"all_gather", "all_gather: everyone collects every rank's tensor", 4, all_gather,
     Collective::AllGather},
    // The article teaches the ring all-reduce; the process group's default
    // is auto.
    {"all_reduce", "all_reduce: everyone gets the sum", 4, all_reduce, Collective::AllReduce,
     "ring"},
    {"reduce_scatter", "reduce_scatter: the sum, cut in parts, one part per rank", 4,
     reduce_scatter, Collective::ReduceScatter},
    {"all_to_all", "all_to_all: entry j of rank r goes to rank j (a transpose)", 4, all_to_all,
     Collective::AllToAll},
    {"barrier", "barrier: nobody passes until everybody has arrived", 4, barrier,
     Collective::Barrier},
    {"ddp_init_broadcast", "DDP's constructor broadcasts rank 0's weights to every rank", 2,
     ddp_init_broadcast},
    {"ddp_grad_average",
     "DDP averages gradients over processes: 14.0 on 2 ranks, 7.0 for the same samples on 4", 2,
     ddp_grad_average, std::nullopt, "", four_samples_problem, 4},
    {"ddp_basic", "one DDP training step of ToyModel: different losses, the same update", 2,
     ddp_basic},
    {"ddp_checkpoint", "save on rank 0, barrier, load on every rank, then train", 2,
     ddp_checkpoint},
    {"model_parallel", "ToyMpModel: net1 on rank 0, net2 on rank 1, activations sent between", 2,
     model_parallel, std::nullopt, "", two_ranks_problem},
    {"horovod", "Horovod's recipe: lr x size, broadcast, fused gradient averaging", 4, horovod},
    {"train", "a deterministic DDP run to check by hand or against PyTorch", 2, train},
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
