#include "ops/read_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ringlab {

namespace {

std::string size_text(std::size_t bytes) {
  std::string text = std::to_string(bytes) + " bytes";
  if (bytes >= (std::size_t{1} << 20)) text += " (" + std::to_string(bytes >> 20) + " MiB)";
  return text;
}

// Closes the descriptor however the read ends.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string_view file_type_name(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

std::string read_regular_file(const std::string& path, std::string_view what,
                              std::size_t max_bytes) {
  const std::string cannot = "cannot read " + std::string(what) + " '" + path + "': ";
  const auto system_error = [&](const char* step) {
    return std::runtime_error(cannot + step + std::strerror(errno));
  };
  const auto check = [&](const struct stat& st) {
    if (S_ISDIR(st.st_mode))
      throw std::runtime_error(cannot + "it is a folder, not a file: give the path of a " +
                               std::string(what) + " file (inside it, perhaps)");
    if (!S_ISREG(st.st_mode))
      throw std::runtime_error(cannot + "it is " + std::string(file_type_name(st.st_mode)) +
                               ", not a regular file; ringlab reads only regular files: give "
                               "the path of a " +
                               std::string(what) + " file");
    if (static_cast<std::size_t>(st.st_size) > max_bytes)
      throw std::runtime_error(cannot + "it is " + size_text(static_cast<std::size_t>(st.st_size)) +
                               ", more than the " + size_text(max_bytes) + " a " +
                               std::string(what) + " may be: is it the right file?");
  };
  // stat first: a FIFO or a device is refused without being opened (opening
  // some devices does something).
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw system_error("");
  check(st);
  Descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)};
  if (file.fd < 0) throw system_error("opening it failed: ");
  if (::fstat(file.fd, &st) != 0) throw system_error("looking at it failed: ");
  check(st);  // what was opened, should the path have changed since
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t used = 0;
  for (;;) {
    if (used == text.size()) {
      if (text.size() > max_bytes)
        throw std::runtime_error(cannot + "it grew past the " + size_text(max_bytes) + " a " +
                                 std::string(what) + " may be while it was read");
      text.resize(std::min(max_bytes + 1, std::max<std::size_t>(4096, 2 * text.size())));
    }
    const ssize_t n = ::read(file.fd, text.data() + used, text.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw system_error("reading it failed: ");
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  text.resize(used);
  return text;
}

}  // namespace ringlab
