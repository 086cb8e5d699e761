// The log sink: stderr by default, replaceable by tests (see log.hpp).
#include "net/log.hpp"

#include <cstdio>
#include <mutex>
#include <utility>

namespace ringlab::net {

namespace {
std::mutex& sink_mutex() {
  static std::mutex mutex;
  return mutex;
}
LogSink& current_sink() {
  static LogSink sink;
  return sink;
}
}  // namespace

void log_line(const std::string& line) {
  std::lock_guard lock(sink_mutex());
  if (current_sink()) {
    current_sink()(line);
    return;
  }
  std::fprintf(stderr, "ringlab tcp: %s\n", line.c_str());
}

LogSink set_log_sink(LogSink sink) {
  std::lock_guard lock(sink_mutex());
  return std::exchange(current_sink(), std::move(sink));
}

}  // namespace ringlab::net
