#include "transport/thread_world.hpp"

#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace ringlab {

void ThreadWorld::run(const std::function<void(Transport&)>& body, Duration timeout) {
  std::mutex error_mutex;
  std::exception_ptr first_error;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(size()));
  for (int rank = 0; rank < size(); ++rank) {
    threads.emplace_back([&, rank] {
      // Made outside the try: a failing rank is marked failed before its
      // transport goes (see run's comment).
      std::unique_ptr<Transport> transport;
      try {
        transport = connect(rank);
        transport->set_timeout(timeout);
        body(*transport);
      } catch (const std::exception& error) {
        {
          std::lock_guard lock(error_mutex);
          // Keep the root cause: ranks woken by fail() report a PeerError later.
          if (!first_error) first_error = std::current_exception();
        }
        fail(rank, error.what());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace ringlab
