// The command line against bad numbers and bad output paths, and the
// training lessons against divergence (issue 21, items 2, 3 and 5), run as a
// user runs them: the ringlab executable.
//
// The numeric options are found by walking `ringlab --help` and the help of
// every subcommand, at every depth: every option whose type is FLOAT must
// refuse nan, inf and 1e999 (an infinity once read), so an option added
// later is checked without anyone listing it here.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "file_test_support.hpp"
#include "run_program.hpp"
#include "training/checkpoint.hpp"

using ringlab::testing::Folder;
using ringlab::testing::run_ringlab;

namespace {

// The entries of a help text's section ("Options:", "Subcommands:"): the
// first word of each line that starts with two spaces, and the second.
std::vector<std::pair<std::string, std::string>> section(const std::string& help,
                                                         const std::string& title) {
  std::vector<std::pair<std::string, std::string>> entries;
  std::istringstream lines(help);
  bool inside = false;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line[0] != ' ') inside = line == title;
    if (!inside || !line.starts_with("  ") || line.starts_with("   ")) continue;
    std::istringstream words(line);
    std::string first, second;
    words >> first >> second;
    entries.emplace_back(first, second);
  }
  return entries;
}

// "--lr" from "-n,--lr" or "--lr,--learning-rate": the first long name.
std::string long_name(const std::string& names) {
  std::istringstream parts(names);
  for (std::string name; std::getline(parts, name, ',');)
    if (name.starts_with("--")) return name;
  return names;
}

// Every FLOAT option of the command line: its long name, per subcommand
// path ("sim", "exercise show").
std::map<std::string, std::vector<std::string>> float_options() {
  std::map<std::string, std::vector<std::string>> found;
  std::vector<std::string> paths{""};
  while (!paths.empty()) {
    const std::string path = paths.back();
    paths.pop_back();
    const auto help = run_ringlab(path + " --help");
    REQUIRE(help.status == 0);
    for (const auto& [names, type] : section(help.output, "Options:"))
      if (type.starts_with("FLOAT")) found[path].push_back(long_name(names));
    for (const auto& [name, description] : section(help.output, "Subcommands:"))
      paths.push_back(path.empty() ? name : path + " " + name);
  }
  return found;
}

bool contains(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

}  // namespace

TEST_SUITE("cli_numbers") {
  TEST_CASE("every FLOAT option of every command refuses nan, inf and 1e999") {
    const auto found = float_options();
    std::set<std::string> all;
    for (const auto& [path, options] : found)
      for (const std::string& option : options) all.insert(path + " " + option);
    // The walk finds at least the options the issue names (a walk that
    // found nothing would check nothing).
    for (const char* known :
         {"lesson --lr", "lesson --epoch-seconds", "sim --alpha", "sim --bandwidth", "sim --gamma",
          "sim --uplink-bandwidth", "sim --lr", "sim --params", "sim --bucket-mb",
          "sim --first-bucket-mb", "sim --backward-ms"})
      CHECK_MESSAGE(all.count(known) == 1, known << " was not found among the FLOAT options");
    MESSAGE(all.size() << " FLOAT options found");
    for (const std::string& command : all) {
      for (const char* value : {"nan", "inf", "-inf", "1e999", "NaN"}) {
        const auto run = run_ringlab(command + " " + value);
        const std::string option = command.substr(command.rfind(' ') + 1);
        INFO("ringlab " << command << " " << value << " printed:\n" << run.output);
        CHECK(run.status != 0);
        CHECK(contains(run.output, option + ": " + value + " is not allowed: give a finite"));
      }
    }
  }

  TEST_CASE("negative costs are refused like NaN, naming the option") {
    // Issue 33: `sim --alpha -1` was accepted (a total of 0.000 us), and so
    // were --gamma -1 and --uplink-bandwidth -1; --bandwidth 0 failed after
    // the options were read, naming no option.
    for (const auto& [command, says] : std::vector<std::pair<std::string, std::string>>{
             {"sim all_reduce --alpha -1", "--alpha: -1 is not allowed: give a latency"},
             {"sim ddp --alpha -0.5", "--alpha: -0.5 is not allowed: give a latency"},
             {"sim all_reduce --gamma -1", "--gamma: -1 is not allowed: give a time per"},
             {"sim all_reduce --bandwidth 0", "--bandwidth: 0 is not allowed: give a bandwidth"},
             {"sim all_reduce --bandwidth -1", "--bandwidth: -1 is not allowed: give a bandwidth"},
             {"sim all_reduce --topology switch --uplink-bandwidth -1",
              "--uplink-bandwidth: -1 is not allowed: give an uplink bandwidth"}}) {
      const auto run = run_ringlab(command);
      INFO("ringlab " << command << " printed:\n" << run.output);
      CHECK(run.status != 0);
      CHECK(contains(run.output, says));
      CHECK(!contains(run.output, "total"));
    }
    // Zero costs nothing and is a cost model still (--uplink-bandwidth 0:
    // the links' bandwidth).
    for (const std::string command :
         {"sim all_reduce --alpha 0 --gamma 0", "sim all_reduce --topology switch --uplink-bandwidth 0"}) {
      const auto run = run_ringlab(command);
      INFO("ringlab " << command << " printed:\n" << run.output);
      CHECK(run.status == 0);
    }
  }

  TEST_CASE("a real number out of its range says the range in a few words") {
    const auto run = run_ringlab("lesson train --lr 2000");
    INFO(run.output);
    CHECK(run.status != 0);
    CHECK(contains(run.output, "--lr: 2000 is not allowed: give a learning rate from 0 to 1000"));
    CHECK(!contains(run.output, "0.000000"));
  }
}

TEST_SUITE("cli_output_paths") {
  TEST_CASE("--trace into a folder that does not exist fails before the run, naming it") {
    Folder folder;
    const std::string missing = folder / "no/such/dir";
    for (const std::string& command :
         {"lesson all_reduce --trace " + missing + "/t.json", "tour --trace " + missing + "/t.json",
          "sim all_reduce --trace " + missing + "/t.json",
          "run --trace " + missing + "/t.json -- true"}) {
      const auto run = run_ringlab(command);
      INFO("ringlab " << command << " printed:\n" << run.output);
      CHECK(run.status != 0);
      CHECK(contains(run.output, "the folder '" + missing + "' does not exist: create it first"));
      CHECK(!contains(run.output, "before reudce"));  // refused before any rank ran
    }
  }

  TEST_CASE("a trace folder that goes away during the run fails the command after it") {
    // The folder is there when the options are checked and gone when the
    // ranks' traces are merged, 3 epochs of 1 s later.
    Folder folder;
    const std::string out = folder / "out";
    std::filesystem::create_directory(out);
    const auto run = ringlab::testing::run_shell(
        "( (sleep 1; rm -rf " + out + ") & " + ringlab::testing::kCleanEnvironment + RINGLAB_EXE +
        " lesson train_elastic -n 2 --epoch-seconds 1 --max-epoch 3 --checkpoint " +
        folder / "c.pt" + " --trace " + out + "/t.json; status=$?; wait; exit $status )");
    INFO(run.output);
    CHECK(run.status != 0);
    CHECK(contains(run.output, "cannot merge the ranks' traces: cannot write trace file '" + out +
                                   "/t.json': the folder '" + out + "' does not exist"));
    CHECK(contains(run.output, "--trace " + out + "/t.json was not written"));
  }

  TEST_CASE("--trace and --save refuse a device, a FIFO and a folder, and leave them") {
    Folder folder;
    const std::string fifo = folder / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
    std::vector<std::pair<std::string, mode_t>> targets{{fifo, S_IFIFO},
                                                        {folder.path.string(), S_IFDIR}};
    // A copy of /dev/full (as root): a broken check replaces this copy.
    const std::string device = folder / "full";
    if (::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0)
      targets.emplace_back(device, S_IFCHR);
    else
      MESSAGE("not root: the device case is left out");
    for (const auto& [target, type] : targets) {
      for (const std::string& command :
           {"lesson all_reduce --trace " + target, "sim all_reduce --trace " + target,
            "sim all_reduce --save " + target}) {
        const auto run = run_ringlab(command);
        INFO("ringlab " << command << " printed:\n" << run.output);
        CHECK(run.status != 0);
        CHECK(contains(run.output, "cannot write "));
        CHECK(contains(run.output, "'" + target + "': it is a"));
        CHECK(ringlab::testing::type_of(target) == type);
      }
    }
  }
}

TEST_SUITE("cli_input_paths") {
  TEST_CASE("sim --model refuses a FIFO, /dev/zero and a folder at once") {
    // Before: a FIFO blocked the run, /dev/zero filled its memory.
    Folder folder;
    const std::string fifo = folder / "fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
    for (const std::string& path : {fifo, std::string("/dev/zero"), folder.path.string()}) {
      const auto run = ringlab::testing::run_shell("timeout 30 " + std::string(RINGLAB_EXE) +
                                                   " sim all_reduce --ranks 4 --model " + path);
      INFO(run.output);
      CHECK(run.status != 0);
      CHECK(contains(run.output, "cannot read cost model file '" + path + "': it is a"));
      CHECK(run.seconds < 20);
    }
  }
}

TEST_SUITE("training_divergence") {
  TEST_CASE("train_elastic with --lr 1000 stops at the epoch that diverged; its checkpoint loads") {
    Folder folder;
    const std::string checkpoint = folder / "c.pt";
    const auto run = run_ringlab(
        "lesson train_elastic -n 2 --max-epoch 12 --lr 1000 --checkpoint " + checkpoint);
    INFO(run.output);
    CHECK(run.status != 0);
    const std::regex diverged(
        "rank ([01]), epoch ([0-9]+): training diverged: element [0-9]+ of net[12]\\.(weight|bias) "
        "is -?(nan|inf) after the step");
    std::smatch match;
    REQUIRE(std::regex_search(run.output, match, diverged));
    const int epoch = std::stoi(match[2]);
    CHECK(epoch < 12);
    // The last checkpoint is the one saved after the epoch before the one that
    // diverged ("epoch": i after epoch i, as the article saves), whole.
    const ringlab::training::Checkpoint saved = ringlab::training::load_checkpoint(checkpoint);
    CHECK(saved.epoch == epoch - 1);
    for (const auto& entry : saved.model)
      for (float v : entry.value.values()) CHECK(std::isfinite(v));
    CHECK(ringlab::testing::temporaries_left(folder.path, "c.pt") == 0);
  }

  TEST_CASE(
      "train and horovod with --lr 1000 stop with the rank and step, and save nothing after") {
    const auto train = run_ringlab("lesson train --lr 1000 --steps 40");
    INFO(train.output);
    CHECK(train.status != 0);
    CHECK(
        std::regex_search(train.output, std::regex("rank [01], step [0-9]+: training diverged: ")));

    Folder folder;
    const auto horovod =
        run_ringlab("lesson horovod --lr 1000 --steps 8 --checkpoint-dir " + folder.path.string());
    INFO(horovod.output);
    CHECK(horovod.status != 0);
    std::smatch match;
    REQUIRE(std::regex_search(horovod.output, match,
                              std::regex("rank [0-3], epoch ([0-9]+), batch [0-9]+: training "
                                         "diverged: ")));
    const int epoch = std::stoi(match[1]);
    for (int e = 0; e < 8; ++e) {
      const std::string path = folder / ("checkpoint-" + std::to_string(e) + ".json");
      CAPTURE(e);
      CHECK(std::filesystem::exists(path) == (e < epoch));
      if (e < epoch) CHECK_NOTHROW(ringlab::training::load_checkpoint(path));
    }
  }
}
