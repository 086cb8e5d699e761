#include "exercises/catalog.hpp"

#include <stdexcept>
#include <string>

#include "exercises/builtin.hpp"
#include "primitives/algorithms.hpp"

namespace ringlab::exercises {

namespace detail {
std::string_view solution_text(std::string_view name);  // generated: solution_texts.cpp
}  // namespace detail

namespace {

// clang-format off
const Exercise kExercises[] = {
    {"ping_pong", "ping-pong", Shape::PingPong, "",
     "Rank 0 sends its buf to rank 1 (step 0). Rank 1 receives it into scratch space "
     "(comm.scratch), adds it to its own buf (comm.reduce with ReduceOp::SUM) and sends the "
     "sum back to rank 0 (step 1), which receives it into its buf. Every other rank returns at "
     "once, and so does rank 0 in a world of 1 rank: it has no partner.",
     "2 steps; rank 0 and rank 1 each send one message of N bytes (N = buf's bytes); the other "
     "ranks send nothing.",
     "Rank 0: send, then receive. Rank 1: receive, reduce, send. A receive's buffer has the "
     "message's size, and a send and its receive use the same step.",
     "void ping_pong(Comm& comm, Elems buf)", "the pingpong lesson's exchange",
     PingPongFn{builtin_ping_pong}},
    {"binomial_broadcast", "binomial broadcast", Shape::Rooted, "broadcast",
     "Every rank ends with root's buf. Number the ranks from the root: v = (r - root + P) % P, "
     "and turn a v back into a rank with (v + root) % P. Round k (step k, mask 2^k): every v "
     "below 2^k already has the data and sends it to v + 2^k, if that is below P. So a rank "
     "v > 0 receives once, in the round of v's lowest set bit, from v minus that bit, and then "
     "sends in the rounds below it, to v + 2^j.",
     "ceil(log2 P) steps; every rank but the root receives N bytes once; a rank sends N bytes to "
     "each of its children (the root to ceil(log2 P) of them): P - 1 messages in all.",
     "Relative ranks make every root look like root 0; a rank may only send what it has "
     "received, so it receives first and sends to its children after, from the largest "
     "subtree down.",
     "void binomial_broadcast(Comm& comm, Elems buf, int root)", "broadcast binomial",
     RootedFn{broadcast_binomial}},
    {"ring_reduce_scatter", "ring reduce-scatter", Shape::BlocksReduce, "reduce_scatter",
     "buf holds P blocks (blocks[b] is block b); rank r must end with block r reduced with op "
     "over all ranks; the other blocks are scratch. In a ring, rank r sends to right = (r+1) % P "
     "and receives from left = (r-1+P) % P. Step s = 0 .. P-2: send block (r-s-1) mod P to the "
     "right, receive block (r-s-2) mod P from the left into scratch, and reduce it into that "
     "block of buf. What you send in step s is what you reduced in step s-1 (your own data at "
     "s = 0), so after step P-2 block r holds all P contributions.",
     "P - 1 steps; every rank sends P - 1 messages of one block: (P-1)/P of the P blocks' "
     "bytes.",
     "In step s, send block (r-s-1) mod P and reduce the received one into block (r-s-2) mod P; "
     "sendrecv does both at once, so a ring where everyone sends first cannot deadlock.",
     "void ring_reduce_scatter(Comm& comm, Elems buf, std::span<const Chunk> blocks, ReduceOp op)",
     "reduce_scatter ring", BlocksReduceFn{reduce_scatter_ring}},
    {"ring_all_reduce", "ring all-reduce", Shape::AllReduce, "all_reduce",
     "Every rank ends with buf reduced with op over all ranks. Cut buf into P chunks, "
     "chunks = split_even(buf.count, P), and run two passes around the ring (right = r+1, "
     "left = r-1, mod P). Steps 0 .. P-2, the reduce-scatter: in step s send chunk (r-s-1) mod P "
     "to the right, receive chunk (r-s-2) mod P from the left and reduce it into yours; after "
     "it rank r holds chunk r reduced. Steps P-1 .. 2P-3, the all-gather: in its step s (from "
     "0) send chunk (r-s) mod P and receive chunk (r-s-1) mod P into buf, replacing it.",
     "2(P-1) steps; every rank sends 2(P-1) messages of one chunk: 2(P-1)/P * N bytes, the "
     "least any all-reduce can send.",
     "The first pass reduces (comm.reduce into your chunk), the second only copies (receive "
     "straight into buf); the chunk indices are what everyone gets wrong first: write them out "
     "for P = 3 by hand.",
     "void ring_all_reduce(Comm& comm, Elems buf, ReduceOp op)", "all_reduce ring",
     AllReduceFn{all_reduce_ring}},
    {"recursive_doubling", "recursive-doubling all-reduce", Shape::AllReduce, "all_reduce",
     "Every rank ends with buf reduced with op over all ranks, in log2 P rounds. For P a power "
     "of two: in round k (mask 2^k) swap the whole buf with partner r ^ mask (sendrecv into "
     "scratch) and reduce. So that both partners hold the same bits, reduce as "
     "lower-rank-data op higher-rank-data. For other P, fold first (step 0): with pof2 the "
     "largest power of two <= P and rem = P - pof2, each even rank 2i < 2*rem sends its buf to "
     "2i+1 and waits for the result; the pof2 ranks left are renumbered f = r / 2 (odd r < "
     "2*rem) or f = r - rem, run the rounds as steps 1, 2, ... among themselves, and rank 2i+1 "
     "sends the result back to 2i in a last step.",
     "log2 P steps of N bytes for P a power of two (N * log2 P bytes per rank); otherwise "
     "log2(pof2) + 2 steps.",
     "Partners differ in one bit of their (folded) rank; a rank that sits out the rounds must "
     "still receive the result at the end, with the step the sender uses.",
     "void recursive_doubling(Comm& comm, Elems buf, ReduceOp op)",
     "all_reduce recursive_doubling", AllReduceFn{all_reduce_recursive_doubling}},
    {"ring_all_gather", "ring all-gather", Shape::Blocks, "all_gather",
     "buf holds P blocks (blocks[b]); on entry rank r has filled its own block r, and every rank "
     "must end with all P blocks. Step s = 0 .. P-2: send block (r-s) mod P to the right "
     "(r+1) and receive block (r-s-1) mod P from the left (r-1) into buf: the block received "
     "in step s is sent on in step s+1.",
     "P - 1 steps; every rank sends P - 1 blocks: (P-1)/P of the P blocks' bytes.",
     "Nothing is reduced here: receive straight into the block's place in buf.",
     "void ring_all_gather(Comm& comm, Elems buf, std::span<const Chunk> blocks)",
     "all_gather ring", BlocksFn{all_gather_ring}},
    {"pairwise_all_to_all", "pairwise all-to-all", Shape::AllToAll, "all_to_all",
     "send_blocks[d] of send is what this rank sends to rank d; what rank s sends lands in "
     "recv_blocks[s] of recv. Copy your own block locally, then in step s = 1 .. P-1 send to "
     "(r+s) % P and receive from (r-s+P) % P: each step is a shift, so every rank sends to one "
     "rank and receives from another at once.",
     "P - 1 steps; every rank sends its P - 1 blocks for the others: (P-1)/P of send's bytes.",
     "The block for rank d is send_blocks[d]; the one from rank s goes to recv_blocks[s]: in "
     "step s those are two different ranks.",
     "void pairwise_all_to_all(Comm& comm, Elems send, std::span<const Chunk> send_blocks, "
     "Elems recv, std::span<const Chunk> recv_blocks)",
     "all_to_all pairwise", AllToAllFn{all_to_all_pairwise}},
    {"dissemination_barrier", "dissemination barrier", Shape::Barrier, "barrier",
     "No rank may return before every rank has called the barrier. Round k = 0, 1, ... while "
     "2^k < P (step k): send an empty message (Elems{}) to (r + 2^k) % P and receive one from "
     "(r - 2^k + P) % P. After round k a rank has heard, directly or through others, from the "
     "2^(k+1) - 1 ranks before it.",
     "ceil(log2 P) steps; every rank sends ceil(log2 P) messages of 0 bytes.",
     "A rank knows another has arrived only through a chain of messages from it; send and "
     "receive in each round, and run all ceil(log2 P) rounds.",
     "void dissemination_barrier(Comm& comm)", "barrier dissemination",
     BarrierFn{barrier_dissemination}},
    {"ddp_bucket_average", "DDP's bucketed gradient average", Shape::Buckets, "all_reduce",
     "grads holds this rank's gradients (float32), cut into buckets listed in the order DDP's "
     "backward fills them (the last layers first). Every rank must end with the average of "
     "grads over all ranks. For each bucket in that order: all-reduce it with ReduceOp::SUM "
     "(ringlab's ring: all_reduce_ring(comm, bucket, ReduceOp::SUM) from "
     "primitives/algorithms.hpp), then divide it by the world size: "
     "comm.transport().divide(bucket.dtype, bucket.bytes(), comm.size()).",
     "2(P-1) steps per bucket; 2(P-1)/P of the gradients' bytes per rank, as one ring "
     "all-reduce of everything.",
     "DDP averages, it does not sum: every bucket is all-reduced and then divided by P, in the "
     "same order on every rank.",
     "void ddp_bucket_average(Comm& comm, Elems grads, std::span<const Chunk> buckets)",
     "DDP: all_reduce ring per bucket, / P", BlocksFn{builtin_ddp_bucket_average}},
};
// clang-format on

std::string alternative_name(std::size_t index) {
  static const char* const names[] = {"void(Comm&, Elems)",
                                      "void(Comm&, Elems, int)",
                                      "void(Comm&, Elems, std::span<const Chunk>, ReduceOp)",
                                      "void(Comm&, Elems, ReduceOp)",
                                      "void(Comm&, Elems, std::span<const Chunk>)",
                                      "void(Comm&, Elems, std::span<const Chunk>, Elems, "
                                      "std::span<const Chunk>)",
                                      "void(Comm&)"};
  return index < std::size(names) ? names[index] : "?";
}

std::size_t expected_alternative(Shape shape) {
  switch (shape) {
    case Shape::PingPong:
      return 0;
    case Shape::Rooted:
      return 1;
    case Shape::BlocksReduce:
      return 2;
    case Shape::AllReduce:
      return 3;
    case Shape::Blocks:
    case Shape::Buckets:
      return 4;
    case Shape::AllToAll:
      return 5;
    case Shape::Barrier:
      return 6;
  }
  return 0;
}

// Words of `text` on lines of at most `width` characters, each after `indent`.
std::string wrapped(std::string_view text, std::string_view indent, std::size_t width = 78) {
  std::string out, line;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(start, end - start);
    if (!line.empty() && indent.size() + line.size() + 1 + word.size() > width) {
      out += std::string(indent) + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + std::string(word);
    start = end + 1;
  }
  if (!line.empty()) out += std::string(indent) + line + "\n";
  return out;
}

}  // namespace

std::span<const Exercise> all_exercises() { return kExercises; }

const Exercise& find_exercise(std::string_view name) {
  for (const Exercise& exercise : kExercises)
    if (exercise.name == name) return exercise;
  std::string names;
  for (const Exercise& exercise : kExercises)
    names += (names.empty() ? "" : ", ") + std::string(exercise.name);
  throw std::invalid_argument("no exercise '" + std::string(name) + "': the exercises are " +
                              names + " (ringlab exercise list)");
}

int position(const Exercise& exercise) { return static_cast<int>(&exercise - kExercises) + 1; }

std::string signature_problem(const Exercise& exercise, const Function& fn) {
  const std::size_t expected = expected_alternative(exercise.shape);
  if (fn.index() == expected) return "";
  return std::string(exercise.name) + " must be " + alternative_name(expected) +
         ", but the function given is " + alternative_name(fn.index()) + ": write it as " +
         std::string(exercise.signature) + " (exercises/task.hpp)";
}

std::string starter_file(const Exercise& exercise) {
  const std::string name(exercise.name);
  std::string text = "// ringlab exercise " + std::to_string(position(exercise)) + " of " +
                     std::to_string(std::size(kExercises)) + ": " + std::string(exercise.title) +
                     " (" + name + ")\n//\n// The task (P ranks, this rank r):\n";
  text += wrapped(exercise.task, "//   ");
  text += "//\n// The cost to reach (N = bytes per rank), as ringlab's " +
          std::string(exercise.builtin) + " does:\n";
  text += wrapped(exercise.cost, "//   ");
  text +=
      "//\n"
      "// Check it:  ringlab exercise check " +
      name +
      "\n"
      "// Watch it:  ringlab exercise show " +
      name +
      "\n"
      "// Stuck?     ringlab exercise solution " +
      name +
      "   (a whole file like this one)\n"
      "// Comm's calls are listed at the top of exercises/task.hpp.\n"
      "#include \"exercises/task.hpp\"\n\n"
      "using namespace ringlab;\n\n" +
      std::string(exercise.signature) + " {\n  // Your code here.\n}\n";
  return text;
}

std::string_view solution_file(const Exercise& exercise) {
  return detail::solution_text(exercise.name);
}

}  // namespace ringlab::exercises
