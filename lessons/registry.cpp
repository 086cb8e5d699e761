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

namespace {
constexpr Lesson kLessons[] = {
    {"pingpong", "send/recv: two ranks pass a tensor back and forth", 2, pingpong},
    {"pingpong_async", "isend/irecv: the same ping-pong with Work handles", 2, pingpong_async},
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
