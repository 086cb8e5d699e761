// One line to stderr per event worth telling the operator about (a rejected
// stray connection, a garbled store request), from the store and from the TCP
// transport's rendezvous. Tests swap the sink to check that the line was
// written.
#pragma once

#include <functional>
#include <string>

namespace ringlab::net {

// Writes "ringlab tcp: <line>\n" to stderr (or to the sink set below); the
// store's lines too, as they read since the store was part of the TCP backend.
void log_line(const std::string& line);

// Replaces where log lines go; an empty function restores stderr. Returns the
// previous sink. Thread-safe.
using LogSink = std::function<void(const std::string& line)>;
LogSink set_log_sink(LogSink sink);

}  // namespace ringlab::net
