// Writing a file so that no reader ever sees half of it: a temporary file in
// the same folder, flushed to disk, renamed over the target, and the folder
// flushed so that the rename lasts too. Checkpoints, traces, cost models and
// the launcher's error files all go through here: a process killed while it
// writes leaves the previous file whole.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace ringlab {

// Calls write(out) on a temporary file beside `path` (".NAME.tmp-XXXXXX"),
// fsyncs it, renames it over `path` and fsyncs the folder. If any of that
// fails it throws std::runtime_error, "cannot write WHAT 'PATH': STEP failed:
// REASON" (`what`: "checkpoint", "trace file", ...), leaving `path` as it was
// and no temporary file behind; so does an exception from `write`, which
// propagates as it is.
void write_file_atomically(const std::string& path, std::string_view what,
                           const std::function<void(std::ostream&)>& write);

// The same for contents already in memory.
void write_file_atomically(const std::string& path, std::string_view what,
                           std::string_view contents);

}  // namespace ringlab
