// The curriculum of `ringlab exercise`: thirteen exercises, in order, each a
// function the learner writes (task.hpp) and ringlab has already
// (primitives/), with the task and the cost to reach.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "exercises/harness.hpp"

namespace ringlab::exercises {

// How an exercise's buffers are laid out and checked (cases.hpp).
enum class Shape {
  PingPong,      // buf; ranks 0 and 1 end with their sum
  Rooted,        // buf; everyone ends with root's (broadcast)
  BlocksReduce,  // P blocks in; rank r's block r reduced (reduce_scatter)
  AllReduce,     // buf; everyone ends with the reduction
  Blocks,        // P blocks, own block in; everyone ends with all (all_gather)
  AllToAll,      // send/recv of P blocks each: the transpose
  Barrier,       // no data: nobody leaves before everybody arrived
  Buckets,       // float32 grads in buckets; everyone ends with the average
  Reduce,        // buf, root, op; the root ends with the reduction, the others
                 // with Gloo's ring's partial results (reduce_forms.hpp)
};

struct Exercise {
  std::string_view name;   // "ring_all_reduce": the function, the file, the program
  std::string_view title;  // "ring all-reduce"
  Shape shape;
  // The torch.distributed collective it is ("all_reduce"), "" if none: what
  // the GUI draws it as.
  std::string_view collective;
  std::string_view task;       // what to write, for the file's comment
  std::string_view cost;       // the cost to reach, in closed form
  std::string_view hint;       // the idea, for when a check fails
  std::string_view signature;  // the declaration (task.hpp), without the ';'
  std::string_view builtin;    // what ringlab runs for it ("all_reduce ring")
  Function builtin_fn;         // ringlab's own, in the exercise's signature
  // A header of primitives/ the task tells the learner to use, which the
  // starter file includes ("" if none).
  std::string_view include = "";
  // The exercise whose function this one calls ("" if none): the learner's
  // own once it has passed, ringlab's until then (RinglabExercise.cmake).
  std::string_view uses = "";
};

std::span<const Exercise> all_exercises();
// Throws std::invalid_argument listing the names when `name` is none of them.
const Exercise& find_exercise(std::string_view name);
// "3." for the third.
int position(const Exercise& exercise);

// Whether fn has the signature the exercise's shape calls for; "" when it
// does, else why not.
std::string signature_problem(const Exercise& exercise, const Function& fn);

// The file `ringlab exercise start` writes: the task and the cost in its
// comment, the function with an empty body.
std::string starter_file(const Exercise& exercise);
// A complete reference solution (exercises/solutions/NAME.cpp).
std::string_view solution_file(const Exercise& exercise);

}  // namespace ringlab::exercises
