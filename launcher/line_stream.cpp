#include "launcher/line_stream.hpp"

#include <unistd.h>

#include <cerrno>

namespace ringlab::launch {

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

void LineStream::take(const char* data, std::size_t size) {
  if (size > 0) got_bytes = true;
  pending.append(data, size);
  std::size_t start = 0;
  std::string lines, file_lines;
  for (std::size_t newline; (newline = pending.find('\n', start)) != std::string::npos;
       start = newline + 1) {
    lines += prefix + pending.substr(start, newline + 1 - start);
    if (file_fd >= 0) file_lines += pending.substr(start, newline + 1 - start);
    if (on_line) on_line(std::string_view(pending).substr(start, newline - start));
  }
  pending.erase(0, start);
  if (pending.size() >= kMaxLine) {
    lines += prefix + pending + '\n';
    if (file_fd >= 0) file_lines += pending + '\n';
    if (on_line) on_line(pending);
    pending.clear();
  }
  if (!lines.empty() && out_fd >= 0) write_all(out_fd, lines);
  if (!file_lines.empty()) write_all(file_fd, file_lines);
}

void LineStream::close() {
  if (!pending.empty()) {
    if (out_fd >= 0) write_all(out_fd, prefix + pending + '\n');
    if (file_fd >= 0) write_all(file_fd, pending + '\n');
    if (on_line) on_line(pending);
  }
  pending.clear();
  if (fd >= 0) ::close(fd);
  fd = -1;
  if (file_fd >= 0) ::close(file_fd);
  file_fd = -1;
}

}  // namespace ringlab::launch
