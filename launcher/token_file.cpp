#include "launcher/token_file.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace ringlab::launch {

namespace {

// The longest token file read: a secret is a line, not a document.
constexpr off_t kMaxTokenFileBytes = 4096;

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// "nobody (uid 65534)", or "uid 65534" where the user has no name.
std::string user_text(uid_t uid) {
  const passwd* entry = ::getpwuid(uid);
  const std::string id = "uid " + std::to_string(uid);
  return entry ? std::string(entry->pw_name) + " (" + id + ")" : id;
}

// Every folder above the file, from its own up to /: another user (not
// root) who owns one, or may write one without the sticky bit, could put a
// file of their own in its place.
void check_folders(const std::string& file, const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (!real) return;  // opening it said what is wrong
  std::string folder = real;
  std::free(real);
  const uid_t me = ::geteuid();
  while (folder.size() > 1) {
    folder.resize(folder.rfind('/') == 0 ? 1 : folder.rfind('/'));
    struct stat st {};
    if (::stat(folder.c_str(), &st) != 0) continue;
    if (st.st_uid != me && st.st_uid != 0)
      throw std::invalid_argument(
          file + ": the folder " + folder + " belongs to " + user_text(st.st_uid) +
          ", who could replace the file with one of their own: keep the secret in a folder of "
          "yours (e.g. mkdir -m 700 ~/.ringlab)");
    if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))
      throw std::invalid_argument(
          file + ": the folder " + folder + " can be written by other users (mode " +
          mode_text(st.st_mode) + ") and has no sticky bit, so they could replace the file with "
          "one of their own: keep the secret in a folder only you can write (chmod go-w " +
          folder + "), or one with the sticky bit (chmod +t " + folder + ")");
  }
}

// The file's own checks, on what was opened (fstat): a regular file of this
// user that nobody else may read or change.
void check_file(const std::string& file, const std::string& path, const struct stat& st) {
  if (!S_ISREG(st.st_mode))
    throw std::invalid_argument(file + ": not a regular file; give a file that holds the secret");
  if (st.st_uid != ::geteuid())
    throw std::invalid_argument(
        file + ": it belongs to " + user_text(st.st_uid) + ", not to " + user_text(::geteuid()) +
        ", who runs ringlab, so its owner may read the secret: remove it (rm " + path +
        ") and write the secret into a new file of yours, e.g. umask 077; openssl rand -hex 32 > " +
        path);
  if (st.st_mode & 077)
    throw std::invalid_argument(file + ": other users may read or change it (mode " +
                                mode_text(st.st_mode) +
                                "); a secret must be yours alone: chmod 600 " + path);
}

// The secret: the file's text without its trailing white space, one line of
// printable characters.
std::string secret_of(const std::string& file, const std::string& path, std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  if (text.empty())
    throw std::invalid_argument(file + ": the file is empty; write the job's secret there, "
                                "e.g. openssl rand -hex 32 > " + path);
  for (const char c : text)
    if (c < 0x21 || c > 0x7e)
      throw std::invalid_argument(file + ": the secret must be one line of printable characters "
                                  "without spaces (e.g. openssl rand -hex 32)");
  return text;
}

}  // namespace

std::string read_token_file(const std::string& path) {
  const std::string file = "--rdzv-conf token_file=" + path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    throw std::invalid_argument(file + ": cannot open it (" + std::strerror(errno) +
                                "); write the job's secret there on every node, e.g. umask 077; "
                                "openssl rand -hex 32 > " + path);
  struct stat st {};
  std::string text(static_cast<std::size_t>(kMaxTokenFileBytes) + 1, '\0');
  ssize_t got = -1;
  int read_error = 0;
  try {
    if (::fstat(fd, &st) != 0) st.st_mode = 0;
    check_file(file, path, st);
    got = ::read(fd, text.data(), text.size());
    read_error = errno;
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  check_folders(file, path);
  if (got < 0)
    throw std::invalid_argument(file + ": cannot read it (" + std::strerror(read_error) + ")");
  if (got > kMaxTokenFileBytes)
    throw std::invalid_argument(file + ": longer than " + std::to_string(kMaxTokenFileBytes) +
                                " bytes; it should hold one line, the secret");
  text.resize(static_cast<std::size_t>(got));
  return secret_of(file, path, std::move(text));
}

}  // namespace ringlab::launch
