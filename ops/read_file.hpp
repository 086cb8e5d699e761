// Reading a whole file that ringlab (or its user) wrote: a checkpoint, a cost
// model, a trace. Only a regular file is read, and only up to a bound, so a
// path that names /dev/zero, a FIFO or a folder is an error that says so
// instead of a read that never ends or fills the memory.
//
//   const std::string text = read_regular_file(path, "checkpoint", 256 << 20);
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace ringlab {

// "a folder", "a character device", "a FIFO (named pipe)", "a socket", "a
// block device", "a symbolic link", "a regular file": what `mode` (a
// stat's st_mode) says the entry is.
std::string_view file_type_name(mode_t mode);

// The contents of the regular file at `path` (a symbolic link is followed).
// Throws std::runtime_error, "cannot read WHAT 'PATH': REASON", when:
//   - it cannot be opened (REASON is the system's: "No such file or directory");
//   - it is not a regular file ("it is a folder, not a file: give the path of
//     a WHAT file");
//   - it holds more than `max_bytes` bytes, or grows past them while it is read.
// Opening never blocks (a FIFO is refused before it is opened for reading).
std::string read_regular_file(const std::string& path, std::string_view what,
                              std::size_t max_bytes);

}  // namespace ringlab
