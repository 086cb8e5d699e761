// A rank's error file, as torchrun has it: the launcher names one file per
// rank in TORCHELASTIC_ERROR_FILE; a rank that fails may write its error
// there, and the launcher reads it after the rank has ended, to report what
// failed first and why.
//
// The format is torch's (torch.distributed.elastic.multiprocessing.errors):
//   {"message": {"message": "...", "extraInfo": {"timestamp": "<unix seconds>"}}}
// A file whose "message" is a plain string, or a file that is not JSON at all
// (its first line is taken), is read too.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace ringlab::launch {

inline constexpr const char* kErrorFileVariable = "TORCHELASTIC_ERROR_FILE";

// Writes message to path in torch's format, atomically (a temporary file
// next to it, fsync, rename). Throws std::runtime_error naming the path.
void write_error_file(const std::string& path, const std::string& message);

// For a rank: writes message into the file TORCHELASTIC_ERROR_FILE names.
// False when the variable is unset or the file cannot be written (the rank's
// error still goes to stderr; this must never make matters worse).
bool record_error(const std::string& message) noexcept;

struct ErrorReport {
  std::string message;
  std::chrono::system_clock::time_point written;  // the file's modification time
};

// The error in the file at path; nothing when there is no file or it is empty.
std::optional<ErrorReport> read_error_file(const std::string& path);

}  // namespace ringlab::launch
