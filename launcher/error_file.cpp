#include "launcher/error_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "ops/atomic_file.hpp"

namespace ringlab::launch {

namespace {

// Error files are a few lines; a rank that writes more gets the start read.
constexpr std::streamsize kMaxRead = 64 * 1024;

std::string first_line(const std::string& text) {
  const std::size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return "";
  return text.substr(start, text.find('\n', start) - start);
}

}  // namespace

void write_error_file(const std::string& path, const std::string& message) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  const nlohmann::json data = {
      {"message", {{"message", message}, {"extraInfo", {{"timestamp", std::to_string(seconds)}}}}}};
  write_file_atomically(path, "the error file", data.dump() + "\n");
}

bool record_error(const std::string& message) noexcept {
  const char* path = std::getenv(kErrorFileVariable);
  if (!path || !*path) return false;
  try {
    write_error_file(path, message);
    return true;
  } catch (...) {
    return false;
  }
}

std::optional<ErrorReport> read_error_file(const std::string& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0 || !S_ISREG(status.st_mode)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::string text(static_cast<std::size_t>(kMaxRead), '\0');
  in.read(text.data(), kMaxRead);
  text.resize(static_cast<std::size_t>(in.gcount()));

  ErrorReport report;
  report.written = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::seconds(status.st_mtim.tv_sec) +
          std::chrono::nanoseconds(status.st_mtim.tv_nsec)));
  const nlohmann::json data = nlohmann::json::parse(text, nullptr, false);
  if (data.is_object() && data.contains("message")) {
    const nlohmann::json& message = data["message"];
    if (message.is_string())
      report.message = message.get<std::string>();
    else if (message.is_object() && message.contains("message") && message["message"].is_string())
      report.message = message["message"].get<std::string>();
  } else {
    report.message = first_line(text);
  }
  if (report.message.empty()) return std::nullopt;
  return report;
}

}  // namespace ringlab::launch
