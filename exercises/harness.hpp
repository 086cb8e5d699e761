// The program an exercise becomes: the learner's function (exercises/task.hpp)
// and this checker, joined by the main() that ringlab_add_exercise() (the
// CMake function of ringlab's package) writes for it:
//
//   int main(int argc, char** argv) {
//     return ringlab::exercises::exercise_main(argc, argv, "ring_all_reduce", &ring_all_reduce);
//   }
//
// `ringlab exercise check NAME` builds that program and runs it once per
// backend; it can be run by hand too (`./build/ring_all_reduce --help`).
#pragma once

#include <span>
#include <string_view>
#include <variant>

#include "primitives/comm.hpp"

namespace ringlab::exercises {

// The signatures of the exercises' functions (task.hpp); some share one.
using PingPongFn = void (*)(Comm&, Elems buf);
using RootedFn = void (*)(Comm&, Elems buf, int root);
using BlocksReduceFn = void (*)(Comm&, Elems buf, std::span<const Chunk> blocks, ReduceOp op);
using AllReduceFn = void (*)(Comm&, Elems buf, ReduceOp op);
using BlocksFn = void (*)(Comm&, Elems buf, std::span<const Chunk> blocks);
using AllToAllFn = void (*)(Comm&, Elems send, std::span<const Chunk> send_blocks, Elems recv,
                            std::span<const Chunk> recv_blocks);
using BarrierFn = void (*)(Comm&);
using ReduceFn = void (*)(Comm&, Elems buf, ReduceOp op, int root);
using Function = std::variant<PingPongFn, RootedFn, BlocksReduceFn, AllReduceFn, BlocksFn,
                              AllToAllFn, BarrierFn, ReduceFn>;

// Checks `fn` as exercise `name` as the arguments say (--help lists them);
// returns the exit status: 0 passed, 1 failed, 2 bad arguments.
int exercise_main(int argc, char** argv, std::string_view name, Function fn);

}  // namespace ringlab::exercises
