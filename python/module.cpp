// The extension module ringlab._ringlab: what ringlab/torch.py needs from
// C++, and nothing of torch (the build does not need torch).
//
// A tensor crosses as a tuple (address, number of elements, dtype name):
// the Python side checks that it is a contiguous CPU tensor and passes
// tensor.data_ptr(). The collectives run on views of that memory
// (ops/tensor.hpp's Tensor::view), with the GIL released.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "backends/rank_world.hpp"
#include "python/bridge_group.hpp"
#include "primitives/algorithms.hpp"
#include "python/python_store.hpp"

namespace py = pybind11;

namespace ringlab::python {

namespace {

using Buf = std::tuple<std::uintptr_t, std::int64_t, std::string>;  // address, numel, dtype

Tensor view_of(const Buf& b) {
  return Tensor::view(parse_dtype(std::get<2>(b)), std::get<1>(b),
                      reinterpret_cast<std::byte*>(std::get<0>(b)));
}
std::vector<Tensor> views_of(const std::vector<Buf>& list) {
  std::vector<Tensor> views;
  views.reserve(list.size());
  for (const Buf& b : list) views.push_back(view_of(b));
  return views;
}
std::size_t bytes_of(const Tensor& t) { return t.nbytes(); }

// A pending isend/irecv. The Python side keeps the tensor alive until done.
class P2PWork {
 public:
  explicit P2PWork(Work work) : work_(std::move(work)) {}
  bool is_completed() { return work_.is_completed(); }
  void wait(std::int64_t timeout_ms) { work_.wait(Duration(timeout_ms)); }

 private:
  Work work_;
};

// {"all_reduce": "ring", ...} -> {Collective::AllReduce: "ring", ...}
std::map<Collective, std::string> by_collective(py::handle names) {
  std::map<Collective, std::string> out;
  for (auto [collective, name] : py::cast<py::dict>(names))
    out[parse_collective(py::cast<std::string>(collective))] = py::cast<std::string>(name);
  return out;
}

// The Group's settings from ringlab/torch.py's dict (its _settings).
GroupSpec make_spec(int rank, int size, std::int64_t timeout_ms, const py::dict& options) {
  GroupSpec spec;
  spec.rank = rank;
  spec.size = size;
  spec.timeout = Duration(timeout_ms);
  auto text = [](py::handle v) { return py::cast<std::string>(v); };
  const std::map<std::string, std::function<void(py::handle)>> setters = {
      {"algorithms", [&](py::handle v) { spec.algorithms = by_collective(v); }},
      {"algorithm_sources", [&](py::handle v) { spec.algorithm_sources = by_collective(v); }},
      {"trace", [&](py::handle v) { spec.trace = py::cast<bool>(v); }},
  };
  for (auto [key, value] : options) {
    const auto setter = setters.find(text(key));
    if (setter == setters.end())
      throw std::invalid_argument("ringlab Group: unknown setting '" + text(key) + "'");
    setter->second(value);
  }
  return spec;
}

std::shared_ptr<BridgeGroup> make_group(py::object adapter, int rank, int size,
                                        std::int64_t timeout_ms, const py::dict& options) {
  GroupSpec spec = make_spec(rank, size, timeout_ms, options);
  // The store's waits too are limited by the timeout the group runs with
  // (RINGLAB_TIMEOUT_MS wins over torch's: backends/rank_world.hpp).
  const Duration timeout =
      backends::rank_spec(rank, size, backends::process_environment(), spec.timeout)
          .group_timeout(spec.timeout);
  auto store = std::make_shared<PythonStore>(std::move(adapter), timeout);
  std::shared_ptr<BridgeGroup> group;
  {
    py::gil_scoped_release release;
    group = std::make_shared<BridgeGroup>(store, std::move(spec));
  }
  store->release();  // lent for the rendezvous only
  return group;
}

void bind_collectives(py::class_<BridgeGroup, std::shared_ptr<BridgeGroup>>& c) {
  const auto nogil = py::call_guard<py::gil_scoped_release>();
  c.def("broadcast", [](BridgeGroup& g, const Buf& b, int src) {
    Tensor t = view_of(b);
    g.announce(Collective::Broadcast, bytes_of(t));
    g.group().broadcast(t, src);
  }, nogil);
  c.def("all_reduce", [](BridgeGroup& g, const Buf& b, const std::string& op) {
    Tensor t = view_of(b);
    g.announce(Collective::AllReduce, bytes_of(t));
    g.group().all_reduce(t, parse_op(op));
  }, nogil);
  c.def("reduce", [](BridgeGroup& g, const Buf& b, int dst, const std::string& op) {
    Tensor t = view_of(b);
    g.announce(Collective::Reduce, bytes_of(t));
    g.group().reduce(t, dst, parse_op(op));
  }, nogil);
  c.def("all_gather", [](BridgeGroup& g, const std::vector<Buf>& out, const Buf& in) {
    auto list = views_of(out);
    Tensor t = view_of(in);
    g.announce(Collective::AllGather, bytes_of(t));
    g.group().all_gather(list, t);
  }, nogil);
  c.def("gather", [](BridgeGroup& g, const Buf& in, const std::vector<Buf>& out, int dst) {
    auto list = views_of(out);
    Tensor t = view_of(in);
    g.announce(Collective::Gather, bytes_of(t));
    if (g.rank() == dst) g.group().gather(t, list, dst);
    else g.group().gather(t, dst);
  }, nogil);
  c.def("scatter", [](BridgeGroup& g, const Buf& out, const std::vector<Buf>& in, int src) {
    auto list = views_of(in);
    Tensor t = view_of(out);
    g.announce(Collective::Scatter, bytes_of(t));
    g.group().scatter(t, list, src);
  }, nogil);
  c.def("reduce_scatter",
        [](BridgeGroup& g, const Buf& out, const std::vector<Buf>& in, const std::string& op) {
          auto list = views_of(in);
          Tensor t = view_of(out);
          g.announce(Collective::ReduceScatter, bytes_of(t));
          g.group().reduce_scatter(t, list, parse_op(op));
        }, nogil);
  c.def("all_to_all", [](BridgeGroup& g, const std::vector<Buf>& out, const std::vector<Buf>& in) {
    auto outputs = views_of(out);
    const auto inputs = views_of(in);
    g.announce(Collective::AllToAll, in.empty() ? 0 : bytes_of(inputs.front()));
    g.group().all_to_all(outputs, inputs);
  }, nogil);
  c.def("all_to_all_single",
        [](BridgeGroup& g, const Buf& out, const Buf& in, const std::vector<std::int64_t>& out_splits,
           const std::vector<std::int64_t>& in_splits) {
          Tensor output = view_of(out);
          const Tensor input = view_of(in);
          g.announce(Collective::AllToAll, bytes_of(input));
          g.group().all_to_all_single(output, input, out_splits, in_splits);
        }, nogil);
  c.def("barrier", [](BridgeGroup& g) {
    g.announce(Collective::Barrier, 0);
    g.group().barrier();
  }, nogil);
}

void bind_point_to_point(py::class_<BridgeGroup, std::shared_ptr<BridgeGroup>>& c) {
  const auto nogil = py::call_guard<py::gil_scoped_release>();
  c.def("isend", [](BridgeGroup& g, const Buf& b, int dst, int tag) {
    const Tensor t = view_of(b);
    return P2PWork(g.group().isend(t, dst, tag));
  }, nogil);
  c.def("irecv", [](BridgeGroup& g, const Buf& b, int src, int tag) {
    Tensor t = view_of(b);
    return P2PWork(g.group().irecv(t, src, tag));
  }, nogil);
}

}  // namespace

}  // namespace ringlab::python

PYBIND11_MODULE(_ringlab, m) {
  using namespace ringlab;
  using namespace ringlab::python;
  m.doc() = "ringlab's collectives and TCP transport, for ringlab.torch";

  // The most derived last: pybind11 tries the latest registration first.
  auto comm_error = py::register_exception<CommError>(m, "CommError", PyExc_RuntimeError);
  py::register_exception<PeerError>(m, "PeerError", comm_error.ptr());
  py::register_exception<TimeoutError>(m, "TimeoutError", PyExc_TimeoutError);

  m.def("collectives", [] {
    std::vector<std::string> names;
    for (const auto& info : collective_table()) names.emplace_back(info.name);
    return names;
  });
  m.def("algorithm_names", [](const std::string& collective) {
    return algorithm_names(parse_collective(collective));
  });

  py::class_<P2PWork>(m, "P2PWork")
      .def("is_completed", &P2PWork::is_completed, py::call_guard<py::gil_scoped_release>())
      .def("wait", &P2PWork::wait, py::arg("timeout_ms"),
           py::call_guard<py::gil_scoped_release>());

  py::class_<BridgeGroup, std::shared_ptr<BridgeGroup>> group(m, "Group");
  group.def(py::init(&make_group), py::arg("store"), py::arg("rank"), py::arg("size"),
            py::arg("timeout_ms"), py::arg("options") = py::dict());
  group.def_property_readonly("rank", &BridgeGroup::rank);
  group.def_property_readonly("size", &BridgeGroup::size);
  group.def_property_readonly("timeout_ms", [](const BridgeGroup& g) {
    return static_cast<std::int64_t>(g.timeout().count());
  });
  group.def("algorithm", [](BridgeGroup& g, const std::string& collective) {
    return g.group().algorithm(parse_collective(collective));
  });
  group.def("finish", &BridgeGroup::finish, py::call_guard<py::gil_scoped_release>());
  group.def("label_next_collective", &BridgeGroup::label_next_collective, py::arg("label"));
  bind_collectives(group);
  bind_point_to_point(group);
}
