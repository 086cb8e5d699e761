#include "simulator/trace_folder.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <stdexcept>
#include <utility>

namespace ringlab::sim {

namespace {

namespace fs = std::filesystem;

// The rank<r>.json files in folder, by rank (none when it cannot be listed).
std::vector<fs::path> rank_files(const fs::path& folder) {
  std::vector<std::pair<long, fs::path>> found;
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= 9 || name.rfind("rank", 0) != 0 || !name.ends_with(".json")) continue;
    const std::string digits = name.substr(4, name.size() - 9);
    if (digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }))
      continue;
    found.emplace_back(std::stol(digits), it->path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> files;
  for (auto& [rank, file] : found) files.push_back(std::move(file));
  return files;
}

std::vector<RankWalkthroughs> read_folder(const fs::path& folder) {
  std::error_code error;
  const fs::path merged = folder / "trace.json";
  if (fs::exists(merged, error)) return read_walkthroughs(merged.string());
  const std::vector<fs::path> files = rank_files(folder);
  if (files.empty())
    throw std::runtime_error("folder '" + folder.string() +
                             "' holds neither trace.json nor rank<r>.json files, which "
                             "RINGLAB_TRACE=DIR and `ringlab run --trace` write: give a trace "
                             "file, or the folder a run traced into");
  std::vector<RankWalkthroughs> all;
  for (const fs::path& file : files) {
    std::vector<RankWalkthroughs> one = read_walkthroughs(file.string());
    std::move(one.begin(), one.end(), std::back_inserter(all));
  }
  return all;
}

}  // namespace

std::vector<RankWalkthroughs> read_run_walkthroughs(const std::string& path) {
  std::error_code error;
  if (fs::is_directory(path, error)) return read_folder(path);
  if (!fs::exists(path, error)) {
    const fs::path parent = fs::path(path).parent_path();
    const fs::path folder = parent.empty() ? fs::path(".") : parent;
    if (!rank_files(folder).empty())
      throw std::runtime_error(
          "no trace file '" + path + "'; its folder holds the ranks' own files (rank<r>.json), "
          "which are merged into one only once every rank wrote its own (a rank that died "
          "wrote none): give the folder, '" + folder.string() + "', to read them together");
  }
  return read_walkthroughs(path);
}

}  // namespace ringlab::sim
