// ringlab exercise 12: binary-tree all-reduce, a reference solution.
#include <memory>
#include <vector>

#include "exercises/task.hpp"

using namespace ringlab;

void binary_tree_all_reduce(Comm& comm, Elems buf, ReduceOp op) {
  const int P = comm.size();
  const int r = comm.rank();
  std::vector<int> children;
  for (int c : {2 * r + 1, 2 * r + 2})
    if (c < P) children.push_back(c);

  // Up: both children's partials (posted together), folded in child order.
  std::vector<Comm::Scratch> partials;
  std::vector<std::unique_ptr<Request>> receives;
  for (int child : children) {
    partials.push_back(comm.scratch(buf.count, buf.dtype));
    receives.push_back(comm.irecv(child, partials.back().elems, 0));
  }
  for (std::size_t i = 0; i < children.size(); ++i) {
    comm.wait(*receives[i]);
    comm.reduce(op, buf, partials[i].elems);
  }
  if (r != 0) {
    comm.send((r - 1) / 2, buf, 0);
    comm.recv((r - 1) / 2, buf, 1);  // down: the result, from the parent
  }
  std::vector<std::unique_ptr<Request>> sends;  // to both children at once
  for (int child : children) sends.push_back(comm.isend(child, buf, 1));
  for (auto& request : sends) comm.wait(*request);
  if (op == ReduceOp::AVG) comm.transport().divide(buf.dtype, buf.bytes(), P);
}
