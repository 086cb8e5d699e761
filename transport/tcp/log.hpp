// One line to stderr per event worth telling the operator about (a rejected
// stray connection, a garbled store request). Tests swap the sink to check
// that the line was written.
#pragma once

#include <functional>
#include <string>

namespace ringlab::tcp {

// Writes "ringlab tcp: <line>\n" to stderr (or to the sink set below).
void log_line(const std::string& line);

// Replaces where log lines go; an empty function restores stderr. Returns the
// previous sink. Thread-safe.
using LogSink = std::function<void(const std::string& line)>;
LogSink set_log_sink(LogSink sink);

}  // namespace ringlab::tcp
