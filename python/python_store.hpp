// The store torch.distributed hands the `ringlab` backend, as a
// store::Store, so that the TCP transport's rendezvous
// (transport/tcp/tcp.hpp) runs through it: the ranks publish their
// addresses in torch's TCPStore, FileStore or HashStore, whichever
// init_method made.
//
// It calls the methods of a Python object (ringlab/torch.py's StoreAdapter,
// which knows the differences between torch versions' stores): set, get,
// add, wait, check, compare_set, delete_key, num_keys, describe. Each call
// takes the GIL for its duration; the rendezvous runs with the GIL released.
// A Python TimeoutError becomes a TimeoutError, any other exception a
// CommError carrying its message.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "store/key_value_store.hpp"

namespace ringlab::python {

class PythonStore final : public store::Store {
 public:
  // adapter: the Python object; timeout: for the overloads that take none.
  PythonStore(pybind11::object adapter, Duration timeout);
  // Drops the Python object if release() did not (taking the GIL).
  ~PythonStore() override;
  PythonStore(const PythonStore&) = delete;
  PythonStore& operator=(const PythonStore&) = delete;

  // Lets go of the Python object (the caller holds the GIL). Later calls
  // throw CommError: the store was only lent for the rendezvous.
  void release();

  std::string address() const override { return description_; }
  Duration timeout() const override { return timeout_; }
  void set_timeout(Duration timeout) override { timeout_ = timeout; }

  using Store::get;
  using Store::wait;
  void set(const std::string& key, std::string_view value) override;
  std::string get(const std::string& key, Duration timeout) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;
  void wait(const std::vector<std::string>& keys, Duration timeout) override;
  bool check(const std::vector<std::string>& keys) override;
  std::string compare_set(const std::string& key, std::string_view expected,
                          std::string_view desired) override;
  bool delete_key(const std::string& key) override;
  std::int64_t num_keys() override;

 private:
  // Runs use(adapter) with the GIL held (Python objects are made and
  // dropped only there); Python errors become CommError/TimeoutError.
  template <typename Use>
  auto with_adapter(const char* method, Use&& use);

  pybind11::object adapter_;
  std::string description_;
  Duration timeout_;
};

}  // namespace ringlab::python
