// Writing a file so that no reader ever sees half of it: a temporary file
// beside it, flushed to disk, renamed over it. Internal to simulator/ (the
// trace merger and the cost-model file use it).
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace ringlab::sim {

// Calls write(out) on a temporary file beside `path`, fsyncs it and renames
// it over `path`. Throws std::runtime_error naming the file (`what`: "trace
// file", "cost model file") if any of that fails, leaving `path` as it was
// and no temporary file behind.
void write_file_atomically(const std::string& path, const std::string& what,
                           const std::function<void(std::ostream&)>& write);

}  // namespace ringlab::sim
