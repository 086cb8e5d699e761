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
     .root = "src"},
    {.name = "scatter",
     .teaches = "scatter: the src rank hands entry r of its list to rank r",
     .default_world_size = 4,
     .run = scatter,
     .root = "src"},
    {.name = "gather",
     .teaches = "gather: the dst rank collects every rank's tensor",
     .default_world_size = 4,
     .run = gather,
     .root = "dst"},
    {.name = "reduce",
     .teaches = "reduce: the dst rank gets the sum; the others keep Gloo's partial sums",
     .default_world_size = 4,
     .run = reduce,
     .root = "dst"},
    {"all_gather", "all_gather: everyone collects every rank's tensor", 4, all_gather},
    {"all_reduce", "all_reduce: everyone gets the sum", 4, all_reduce},
    {"reduce_scatter", "reduce_scatter: the sum, cut in parts, one part per rank", 4,
     reduce_scatter},
    {"all_to_all", "all_to_all: entry j of rank r goes to rank j (a transpose)", 4, all_to_all},
    {"barrier", "barrier: nobody passes until everybody has arrived", 4, barrier},
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
