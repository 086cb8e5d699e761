#include "python/python_store.hpp"

#include <pybind11/stl.h>

#include <utility>

namespace py = pybind11;

namespace ringlab::python {

namespace {
py::bytes to_bytes(std::string_view value) { return py::bytes(value.data(), value.size()); }
}  // namespace

PythonStore::PythonStore(py::object adapter, Duration timeout)
    : adapter_(std::move(adapter)), timeout_(timeout) {
  description_ = py::cast<std::string>(adapter_.attr("describe")());
}

PythonStore::~PythonStore() {
  if (!adapter_) return;
  py::gil_scoped_acquire gil;
  adapter_ = py::object();
}

void PythonStore::release() { adapter_ = py::object(); }

template <typename Use>
auto PythonStore::with_adapter(const char* method, Use&& use) {
  py::gil_scoped_acquire gil;
  if (!adapter_)
    throw CommError("the rendezvous store (" + description_ + ") was lent for the rendezvous " +
                    "only: " + method + " comes after it");
  try {
    return use(adapter_.attr(method));
  } catch (py::error_already_set& error) {
    const std::string what = description_ + ": " + method + ": " + error.what();
    if (error.matches(PyExc_TimeoutError)) throw TimeoutError(what);
    throw CommError(what);
  } catch (const py::cast_error& error) {
    throw CommError(description_ + ": " + method + " answered with the wrong type: " +
                    error.what());
  }
}

void PythonStore::set(const std::string& key, std::string_view value) {
  with_adapter("set", [&](py::object f) { f(key, to_bytes(value)); });
}

std::string PythonStore::get(const std::string& key, Duration timeout) {
  return with_adapter("get", [&](py::object f) {
    return py::cast<std::string>(py::bytes(f(key, timeout.count())));
  });
}

std::int64_t PythonStore::add(const std::string& key, std::int64_t delta) {
  return with_adapter("add", [&](py::object f) { return py::cast<std::int64_t>(f(key, delta)); });
}

void PythonStore::wait(const std::vector<std::string>& keys, Duration timeout) {
  with_adapter("wait", [&](py::object f) { f(keys, timeout.count()); });
}

bool PythonStore::check(const std::vector<std::string>& keys) {
  return with_adapter("check", [&](py::object f) { return py::cast<bool>(f(keys)); });
}

std::string PythonStore::compare_set(const std::string& key, std::string_view expected,
                                     std::string_view desired) {
  return with_adapter("compare_set", [&](py::object f) {
    return py::cast<std::string>(py::bytes(f(key, to_bytes(expected), to_bytes(desired))));
  });
}

bool PythonStore::delete_key(const std::string& key) {
  return with_adapter("delete_key", [&](py::object f) { return py::cast<bool>(f(key)); });
}

std::int64_t PythonStore::num_keys() {
  return with_adapter("num_keys", [&](py::object f) { return py::cast<std::int64_t>(f()); });
}

}  // namespace ringlab::python
