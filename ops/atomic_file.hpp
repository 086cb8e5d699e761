// Writing a file so that no reader ever sees half of it: a temporary file in
// the same folder, flushed to disk, renamed over the target, and the folder
// flushed so that the rename lasts too. Checkpoints, traces, cost models and
// the launcher's error files all go through here: a process killed while it
// writes leaves the previous file whole.
//
// Only a regular file is ever written. The path may name:
//   - nothing yet: the file is made, mode 0644;
//   - a regular file: it is replaced, and the new file keeps its mode (a
//     0444 checkpoint stays 0444) and, where this process may, its owner;
//   - a symbolic link (to a file, or to a path not made yet): the link stays,
//     and the file it points to is written, atomically in that file's folder;
// and anything else (a folder, a device such as /dev/null or /dev/full, a
// FIFO, a socket, a link to one of them) is refused before anything is
// written, with an error that says what is there and what to give instead.
//
// A writer killed mid-write leaves its temporary file behind; the next write
// of the same target removes it. Each writer holds a lock (flock) on its
// temporary file while it writes, so only the temporaries of writers that
// died are removed, never one that another process is still writing.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace ringlab {

// Calls write(out) on a temporary file beside the target (".NAME.tmp-XXXXXX"),
// fsyncs it, renames it over the target and fsyncs the folder. If any of that
// fails it throws std::runtime_error, "cannot write WHAT 'PATH': REASON"
// (`what`: "checkpoint", "trace file", ...), leaving the target as it was
// and no temporary file behind; so does an exception from `write`, which
// propagates as it is.
void write_file_atomically(const std::string& path, std::string_view what,
                           const std::function<void(std::ostream&)>& write);

// The same for contents already in memory.
void write_file_atomically(const std::string& path, std::string_view what,
                           std::string_view contents);

// Throws the error write_file_atomically(path, what, ...) would give before
// writing anything: the folder is missing, is not a folder or is read-only;
// the path (or the end of its symbolic links) is a folder, a device, a FIFO
// or a socket; the links go round in a loop. For checking an output path
// before a long run rather than after it.
void check_file_destination(const std::string& path, std::string_view what);

}  // namespace ringlab
