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
     "and turn a v back into a rank with (v + root) % P. A rank v > 0 receives once: from v "
     "minus its lowest set bit 2^k, with step k. Then it sends to v + 2^j for every j below k, "
     "the largest j first, with step j, where v + 2^j < P. The root (v = 0) only sends: to 2^j "
     "for every 2^j < P, the largest first, with step j. So the step numbers count down as the "
     "data spreads: for P = 4 the root sends to 2 (step 1), then to 1 (step 0), and 2 sends "
     "to 3 (step 0).",
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
     "s = 0), so after step P-2 block r holds all P contributions. For AVG, divide block r by "
     "P at the end (task.hpp).",
     "P - 1 steps; every rank sends P - 1 messages of one block: (P-1)/P of the P blocks' "
     "bytes.",
     "In step s, send block (r-s-1) mod P and reduce the received one into block (r-s-2) mod P; "
     "sendrecv does both at once, so a ring where everyone sends first cannot deadlock.",
     "void ring_reduce_scatter(Comm& comm, Elems buf, std::span<const Chunk> blocks, ReduceOp op)",
     "reduce_scatter ring", BlocksReduceFn{builtin_ring_reduce_scatter}},
    {"ring_all_reduce", "ring all-reduce", Shape::AllReduce, "all_reduce",
     "Every rank ends with buf reduced with op over all ranks. Cut buf into P chunks, "
     "chunks = split_even(buf.count, P), and run two passes around the ring (right = r+1, "
     "left = r-1, mod P). Steps 0 .. P-2, the reduce-scatter: in step s send chunk (r-s-1) mod P "
     "to the right, receive chunk (r-s-2) mod P from the left and reduce it into yours; after "
     "it rank r holds chunk r reduced. Steps P-1 .. 2P-3, the all-gather: in its step s (from "
     "0) send chunk (r-s) mod P and receive chunk (r-s-1) mod P into buf, replacing it. For "
     "AVG, divide buf by P at the end (task.hpp).",
     "2(P-1) steps; every rank sends 2(P-1) messages of one chunk: 2(P-1)/P * N bytes, the "
     "least any all-reduce can send.",
     "The first pass reduces (comm.reduce into your chunk), the second only copies (receive "
     "straight into buf); the chunk indices are what everyone gets wrong first: write them out "
     "for P = 3 by hand.",
     "void ring_all_reduce(Comm& comm, Elems buf, ReduceOp op)", "all_reduce ring",
     AllReduceFn{builtin_ring_all_reduce}},
    {"recursive_doubling", "recursive-doubling all-reduce", Shape::AllReduce, "all_reduce",
     "Every rank ends with buf reduced with op over all ranks, in log2 P rounds. For P a power "
     "of two: in round k (mask 2^k) swap the whole buf with partner r ^ mask (sendrecv into "
     "scratch) and reduce. So that both partners hold the same bits, reduce as "
     "lower-rank-data op higher-rank-data. For other P, fold first (step 0): with pof2 the "
     "largest power of two <= P and rem = P - pof2, each even rank 2i < 2*rem sends its buf to "
     "2i+1 and waits for the result; the pof2 ranks left are renumbered f = r / 2 (odd r < "
     "2*rem) or f = r - rem, run the rounds as steps 1, 2, ... among themselves, and rank 2i+1 "
     "sends the result back to 2i in a last step. For AVG, divide buf by P at the end.",
     "log2 P steps of N bytes for P a power of two (N * log2 P bytes per rank); otherwise "
     "log2(pof2) + 2 steps.",
     "Partners differ in one bit of their (folded) rank; a rank that sits out the rounds must "
     "still receive the result at the end, with the step the sender uses.",
     "void recursive_doubling(Comm& comm, Elems buf, ReduceOp op)",
     "all_reduce recursive_doubling", AllReduceFn{builtin_recursive_doubling}},
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
    {"gloo_ring_reduce", "Gloo's segmented ring reduce", Shape::Reduce, "reduce",
     "The root ends with buf reduced with op over all ranks, as PyTorch's Gloo backend "
     "reduces: a segmented ring that leaves partial results on the other ranks, and those are "
     "checked too (the reduce lesson prints them). With e the element's bytes and N buf's "
     "bytes (return at once if N = 0 or P = 1): a segment is min(ceil(N / 2P), 1 MiB) bytes "
     "rounded up to a multiple of e, segE = that / e elements; there are S = max(ceil(N / "
     "segment), 2P) segments, rounded up to a multiple of P, and spr = S / P of them per chunk. "
     "Segment g is elements [g*segE, (g+1)*segE) of buf, clipped (maybe empty); chunk c is "
     "segments [c*spr, (c+1)*spr). Iteration i = 0 .. S-1, with step 1 + i: first, if i >= 2, "
     "wait for the segment received in iteration i-2, reduce it into its place in buf, and "
     "wait for the send of iteration i-2; then, if i < S-2, irecv segment ((r+2)*spr + i) mod "
     "S from rank r+1 into scratch slot i % 2 (two slots of segE) and isend segment ((r+1)*spr "
     "+ i) mod S to rank r-1 (ranks mod P; an empty segment is neither sent nor received). "
     "Last, with step 0: every other rank sends its chunk r to the root, which receives each "
     "straight into its place in buf. For AVG, the root alone divides its buf by P.",
     "P steps up to 2P MiB (S = 2P segments, two in flight at a time: the S - 2 ring "
     "iterations take P - 1 steps, the gather one more); a rank sends about N (P-1)/P bytes "
     "around the ring in S - 2 messages of one segment, and its chunk, N/P, to the root.",
     "Segment s of chunk c starts raw at rank c-1 and travels c-1 -> c-2 -> ... -> c, each "
     "rank folding its own input in, so rank q ends holding the inputs of q, q+1, ..., c-1 "
     "and the owner c all of them; the root only collects the owners' chunks. A received "
     "segment is reduced two iterations after its receive is posted, just before it is sent "
     "on.",
     "void gloo_ring_reduce(Comm& comm, Elems buf, ReduceOp op, int root)", "reduce gloo_ring",
     ReduceFn{builtin_gloo_ring_reduce}},
    {"recursive_halving_reduce_scatter", "recursive-halving reduce-scatter", Shape::BlocksReduce,
     "reduce_scatter",
     "ring_reduce_scatter's result (rank r ends with block r reduced with op over all ranks) in "
     "log2 P rounds. For P a power of two, with lo = 0 at first: step k = 0, 1, ... with mask = "
     "P / 2^(k+1): this rank holds partials of the 2*mask blocks from lo on; the partner is "
     "r ^ mask; keep the half the partner does not (the upper half, from lo + mask, if r & "
     "mask), send the other half to the partner, receive the partner's copy of the kept half "
     "into scratch and reduce it in, and move lo to the kept half. For other P, fold first "
     "(step 0): with pof2 the largest power of two <= P and rem = P - pof2, each even rank 2i < "
     "2*rem sends all of buf to 2i+1, which reduces it into its own. The pof2 ranks left are "
     "renumbered f = r / 2 (odd r < 2*rem) or f = r - rem, and f stands for the group of blocks "
     "2f, 2f+1 (f < rem) or the block f + rem (f >= rem); halve over those groups as over "
     "blocks, in steps 1, 2, ..., the partner f ^ mask being rank 2(f ^ mask) + 1 if f ^ mask < "
     "rem, else (f ^ mask) + rem. Last step: rank 2i+1 sends block 2i to rank 2i. For AVG, "
     "divide block r by P at the end.",
     "log2 P steps for P a power of two, a rank sending (P-1)/P of the blocks' bytes (half, "
     "then a quarter, ...); otherwise log2(pof2) + 2 steps: the fold, the halving and the "
     "delivery.",
     "Each round halves the range of blocks a rank is responsible for and doubles the number of "
     "ranks its partials cover. Ranges of consecutive blocks are one slice of buf: "
     "span_of(blocks, first, last) (primitives/comm.hpp).",
     "void recursive_halving_reduce_scatter(Comm& comm, Elems buf, std::span<const Chunk> blocks, "
     "ReduceOp op)",
     "reduce_scatter recursive_halving", BlocksReduceFn{builtin_halving_reduce_scatter}},
    {"rabenseifner_all_reduce", "Rabenseifner's all-reduce", Shape::AllReduce, "all_reduce",
     "Every rank ends with buf reduced with op over all ranks: a recursive-halving "
     "reduce-scatter, then a recursive-doubling all-gather (Rabenseifner's algorithm, MPI's "
     "choice for long vectors). With pof2, rem and the folded rank f as in "
     "recursive_halving_reduce_scatter: step 0, the fold (each even rank 2i < 2*rem sends all of "
     "buf to 2i+1, which reduces it in, and waits for the result at the end). Cut buf into pof2 "
     "groups, split_even(buf.count, pof2), and halve over them in steps 1 .. L (L = log2 pof2), "
     "so that folded rank f holds group f reduced. Then double, in steps L+1 .. 2L: in step "
     "L+1+k (mask = 2^k) f holds the mask groups from f with its lowest k bits cleared; swap "
     "them with the partner f ^ mask, receiving its groups straight into buf. Last, step "
     "2L+1: rank 2i+1 sends all of buf to 2i. For AVG, divide buf by P at the end.",
     "2 log2 P steps for P a power of two, a rank sending 2(P-1)/P * N bytes (as the ring, in "
     "fewer steps); otherwise 2 log2(pof2) + 2 steps.",
     "The doubling retraces the halving backwards: in each round a rank swaps exactly the range "
     "it has finished for the one its partner has finished. A folded-out rank only sends at the "
     "start and receives at the end.",
     "void rabenseifner_all_reduce(Comm& comm, Elems buf, ReduceOp op)",
     "all_reduce rabenseifner", AllReduceFn{builtin_rabenseifner}},
    {"binary_tree_all_reduce", "binary-tree all-reduce", Shape::AllReduce, "all_reduce",
     "Every rank ends with buf reduced with op over all ranks, along a heap-shaped binary tree: "
     "rank r's parent is (r-1)/2 and its children are 2r+1 and 2r+2, those below P. Up (step "
     "0): receive each child's buf into scratch (post both receives, then wait), reduce them "
     "into yours in child order, and send the result to the parent (rank 0 has none: it ends "
     "with the whole reduction). Down (step 1): receive the result from the parent into buf, "
     "and send it to each child (isend to both, then wait). For AVG, divide buf by P at the end.",
     "2 floor(log2 P) steps; a rank sends N bytes up and N bytes to each child (at most 3N); "
     "ringlab's own cuts vectors over 256 KiB into segments that follow each other up the tree.",
     "Both phases use the same tree: a child's partial goes up with the step the parent "
     "receives it with, and the result comes down the same edges.",
     "void binary_tree_all_reduce(Comm& comm, Elems buf, ReduceOp op)",
     "all_reduce binary_tree", AllReduceFn{builtin_binary_tree}},
    {"ddp_bucket_average", "DDP's bucketed gradient average", Shape::Buckets, "all_reduce",
     "grads holds this rank's gradients (float32), cut into buckets listed in the order DDP's "
     "backward fills them (the last layers first). Every rank must end with the average of "
     "grads over all ranks. For each bucket in that order: all-reduce it with ReduceOp::SUM, "
     "ring_all_reduce(comm, bucket, ReduceOp::SUM), then divide it by the world size: "
     "comm.transport().divide(bucket.dtype, bucket.bytes(), comm.size()). ring_all_reduce is "
     "yours (exercise 4) once it has passed: check builds your ring_all_reduce.cpp in; until "
     "then it is ringlab's all_reduce_ring (primitives/algorithms.hpp, included below). The two "
     "files are then linked into one program: give helpers of your own in either file "
     "internal linkage (static, or an unnamed namespace).",
     "2(P-1) steps per bucket; 2(P-1)/P of the gradients' bytes per rank, as one ring "
     "all-reduce of everything.",
     "DDP averages, it does not sum: every bucket is all-reduced and then divided by P, in the "
     "same order on every rank.",
     "void ddp_bucket_average(Comm& comm, Elems grads, std::span<const Chunk> buckets)",
     "DDP: all_reduce ring per bucket, / P", BlocksFn{builtin_ddp_bucket_average},
     "primitives/algorithms.hpp", "ring_all_reduce"},
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
                                      "void(Comm&)",
                                      "void(Comm&, Elems, ReduceOp, int)"};
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
    case Shape::Reduce:
      return 7;
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
      "#include \"exercises/task.hpp\"\n" +
      (exercise.include.empty() ? "" : "#include \"" + std::string(exercise.include) + "\"\n") +
      "\nusing namespace ringlab;\n\n" +
      std::string(exercise.signature) + " {\n  // Your code here.\n}\n";
  return text;
}

std::string_view solution_file(const Exercise& exercise) {
  return detail::solution_text(exercise.name);
}

}  // namespace ringlab::exercises
