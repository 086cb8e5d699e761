// One child's stdout or stderr on its way out: bytes come in, whole lines go
// out, one write() each, so lines of different ranks never mix.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace ringlab::launch {

// Writes all of text to fd, retrying after EINTR; gives up silently when the
// reader is gone (the ranks' output is lost, not the job).
void write_all(int fd, const std::string& text);

struct LineStream {
  int fd = -1;          // read end of the pipe; -1 once closed
  int out_fd = 1;       // where its lines go; -1: nowhere (redirected to its file)
  int file_fd = -1;     // its log file, if any (lines without the prefix); owned
  std::string prefix;   // put before every line ("[rank 2] ")
  std::string pending;  // bytes after the last newline
  // Called with every line (without its newline or prefix) as it goes out.
  std::function<void(std::string_view line)> on_line;
  bool got_bytes = false;  // anything came in

  // Lines longer than this go out in pieces (a runaway rank must not eat memory).
  static constexpr std::size_t kMaxLine = 1 << 20;

  // Every complete line in data goes out; several whole lines may share one
  // write, but no line is ever split between two writes.
  void take(const char* data, std::size_t size);
  // End of stream: the last line, even without its newline, ends with one so
  // the next rank's line does not continue it. Closes fd and file_fd.
  void close();
};

}  // namespace ringlab::launch
