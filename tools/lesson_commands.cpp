// `ringlab lesson NAME [--world-size N] [--backend B] [--article]`,
// `ringlab lesson --list`, `ringlab tour` (paced, one lesson at a time, when
// stdin is a terminal) and `ringlab start`.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "backends/rank_world.hpp"
#include "gui/gui.hpp"
#include "lessons/article.hpp"
#include "lessons/runner.hpp"
#include "lessons/start_here.hpp"
#include "tools/commands.hpp"
#include "tools/lesson_process.hpp"
#include "tools/option_checks.hpp"

namespace ringlab::cli {

namespace {

struct LessonCommand {
  std::string name;
  bool list = false;
  bool article = false;  // --article: beside the article's page
  lessons::RunOptions options;
  int timeout_ms = static_cast<int>(kDefaultTimeout.count());
  std::vector<std::string> algorithms;  // "collective=name"
  std::optional<backends::TraceSession> trace;  // --trace FILE
};

void apply_common(LessonCommand& cmd) {
  cmd.options.group.timeout = Duration(cmd.timeout_ms);
  cmd.options.trace = cmd.trace ? &*cmd.trace : nullptr;
  for (const std::string& choice : cmd.algorithms) {
    const auto equals = choice.find('=');
    if (equals == std::string::npos)
      throw std::invalid_argument("--algorithm " + choice +
                                  ": write COLLECTIVE=NAME, e.g. all_reduce=recursive_doubling");
    Collective collective;
    try {
      collective = parse_collective(choice.substr(0, equals));
    } catch (const std::invalid_argument& error) {
      throw std::invalid_argument("--algorithm " + choice + ": " + error.what());
    }
    cmd.options.group.algorithms[collective] = choice.substr(equals + 1);
  }
}

void add_common_options(CLI::App& sub, LessonCommand& cmd) {
  sub.add_option("--world-size,-n", cmd.options.world_size,
                 "number of ranks (default: the article's, or the world of the job that started "
                 "this process)")
      ->check(CLI::Range(1, 1024));
  sub.add_option("--backend", cmd.options.backend,
                 "where the ranks run (default " + backends::default_backend() +
                     "): " + backends::backends_help())
      ->check(CLI::IsMember(backends::backend_names()));
  sub.add_option("--timeout-ms", cmd.timeout_ms, "limit of every wait, in milliseconds")
      ->check(whole_number(1, kMaxInt, "a number of milliseconds"));
  sub.add_option("--algorithm", cmd.algorithms,
                 "COLLECTIVE=NAME, e.g. all_reduce=recursive_doubling (repeatable)")
      ->take_all()
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void run_lesson_command(LessonCommand& cmd) {
  if (cmd.list) {
    for (const auto& lesson : lessons::all_lessons())
      std::printf("%-18s world %d  %.*s\n", std::string(lesson.name).c_str(),
                  lesson.default_world_size, static_cast<int>(lesson.teaches.size()),
                  lesson.teaches.data());
    return;
  }
  if (cmd.name.empty()) throw std::invalid_argument("name a lesson, or pass --list to see them");
  apply_common(cmd);
  const lessons::Lesson& lesson = lessons::find_lesson(cmd.name);
  lessons::run_lesson(lesson, cmd.options);
  // What to try next, for a learner at a terminal: on stderr, beside the
  // "# lesson" line, so stdout stays the article's; once, from the process the
  // learner started (under a launcher, rank 0's). Output read by a program
  // (stderr not a terminal) stays as it was.
  const std::optional<tcp::RankPlace> launched = backends::launched_place();
  if (::isatty(2) == 1 && !lesson.try_next.empty() && (!launched || launched->rank == 0))
    std::fprintf(stderr, "try: %.*s\n", static_cast<int>(lesson.try_next.size()),
                 lesson.try_next.data());
}

// What --article cannot compare: a run other than the article's.
void check_article_options(const lessons::Lesson& lesson, const LessonCommand& cmd) {
  const std::string name(lesson.name);
  const std::string why = "--article sets this run beside the article's run of " + name + ", ";
  if (cmd.options.world_size > 0 && cmd.options.world_size != lesson.default_world_size)
    throw std::invalid_argument(why + "on " + std::to_string(lesson.default_world_size) +
                                " ranks: leave out -n " + std::to_string(cmd.options.world_size) +
                                ", or --article");
  if (cmd.options.args.root >= 0)
    throw std::invalid_argument(why + "with its own " + std::string(lesson.root) +
                                " rank: leave out --root, or --article");
  if (cmd.trace)
    throw std::invalid_argument(why + "which it runs itself: leave out --trace, or --article");
  if (backends::launched_world_size() > 0)
    throw std::invalid_argument(why + "which it runs itself: run it outside ringlab run or "
                                "torchrun");
}

// `ringlab lesson NAME --article`: a run of the lesson (a process of its own,
// its stdout read here) beside the article's page, each difference said;
// for a lesson whose article shows no output, the run, then why.
void run_article_command(LessonCommand& cmd) {
  if (cmd.name.empty())
    throw std::invalid_argument("name the lesson to set beside its article, e.g. ringlab lesson "
                                "pingpong --article");
  apply_common(cmd);
  const lessons::Lesson& lesson = lessons::find_lesson(cmd.name);
  const lessons::ArticlePage* page = lessons::article_page(lesson.name);
  if (!page) {
    lessons::run_lesson(lesson, cmd.options);
    std::printf("# --article: %s\n", lessons::article_silence(lesson.name).c_str());
    return;
  }
  lessons::check_options(lesson, cmd.options);
  check_article_options(lesson, cmd);
  // Its every wait has the timeout; a run that still goes on this long has hung.
  const long long limit_ms = 60000 + 4 * static_cast<long long>(cmd.options.group.timeout.count());
  const std::string output = lesson_output(lesson, cmd.options, limit_ms);
  const std::string text = lessons::compare_with_page(*page, output);
  std::fwrite(text.data(), 1, text.size(), stdout);
}

std::optional<std::string> ask_terminal(const std::string& prompt) {
  std::fputs(prompt.c_str(), stdout);
  std::fflush(stdout);
  std::string line;
  if (!std::getline(std::cin, line)) return std::nullopt;
  return line;
}

// The tour: paced when a learner types at it, as it always was when piped.
void run_tour_here(const lessons::RunOptions& options, const std::string& from) {
  if (::isatty(0) == 1)
    lessons::run_paced_tour(options, {ask_terminal, run_lesson_process}, from);
  else
    lessons::run_tour(options, from);
}

// The training lessons' options of `ringlab lesson`.
void add_training_options(CLI::App& lesson, LessonCommand& cmd) {
  lesson.add_option("--lr", cmd.options.args.lr, "training lessons: the learning rate")
      ->check(real_number(0, 1000, "a learning rate"));
  lesson
      .add_option("--steps", cmd.options.args.steps,
                  "train: steps (default 3); horovod: epochs (default 3)")
      ->check(CLI::Range(1, 100000));
  lesson.add_option("--checkpoint", cmd.options.args.checkpoint,
                    "ddp_checkpoint: save the checkpoint here and keep it; train_elastic: save "
                    "every epoch here and resume from it (default checkpoint.pt)");
  lesson.add_option("--checkpoint-dir", cmd.options.args.checkpoint_dir,
                    "horovod: the folder where rank 0 keeps checkpoint-EPOCH.json (default: "
                    "ringlab-runs/horovod in the current folder)");
  lesson
      .add_option("--max-epoch", cmd.options.args.max_epoch, "train_elastic: epochs (default 100)")
      ->check(CLI::Range(1, 1000000));
  lesson
      .add_option("--epoch-seconds", cmd.options.args.epoch_seconds,
                  "train_elastic: pause before each epoch, as the article's sleep(1), so that a "
                  "node can join mid-run (default 0)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            // CLI11's own range check would print the bounds as 0.000000.
            char* end = nullptr;
            const double seconds = std::strtod(text.c_str(), &end);
            if (end == text.c_str() || *end != '\0' || !(seconds >= 0 && seconds <= 3600))
              return "'" + text + "' is not allowed: give a number of seconds from 0 to 3600";
            return "";
          },
          "SECONDS"));
}
}  // namespace

void add_lesson_commands(CLI::App& app) {
  auto cmd = std::make_shared<LessonCommand>();
  CLI::App* lesson = app.add_subcommand("lesson", "run one article program on every rank");
  lesson->add_option("name", cmd->name, "lesson name (see --list)");
  lesson->add_flag("--list", cmd->list, "list the lessons");
  lesson->add_flag("--article", cmd->article,
                   "print the article's own lines beside this run's, and say why each differs");
  lesson
      ->add_option("--root", cmd->options.args.root,
                   "src or dst rank of a lesson that has one (default: the article's)")
      ->check(CLI::Range(0, 1023));
  lesson
      ->add_option_function<std::string>(
          "--dtype", [cmd](const std::string& name) { cmd->options.args.dtype = parse_dtype(name); },
          "seed 001's lessons: their tensors in this dtype (" + dtype_choices() +
              "), as the article's program with dtype=torch.DTYPE prints them")
      ->type_name("DTYPE");
  add_training_options(*lesson, *cmd);
  add_common_options(*lesson, *cmd);
  add_trace_option(*lesson, cmd->trace);
  lesson->callback([cmd] {
    if (cmd->article)
      run_article_command(*cmd);
    else
      run_lesson_command(*cmd);
  });

  // The README's main job: the GUI where one is built and a display is
  // present; otherwise the lesson tour in this terminal.
  auto start_cmd = std::make_shared<LessonCommand>();
  CLI::App* start = app.add_subcommand(
      "start", "the main job: open the GUI, or run the lesson tour when there is no display");
  add_common_options(*start, *start_cmd);
  start->callback([start_cmd] {
    lessons::print_start_here(
        "start here (README's first screen and the end of the tour name the same steps):");
    std::printf("\n");
    std::string reason;
    if (gui::try_open(reason)) return;
    std::printf("ringlab start: %s; running the lesson tour here instead\n\n", reason.c_str());
    std::fflush(stdout);
    apply_common(*start_cmd);
    run_tour_here(start_cmd->options, "");
  });

  auto tour_cmd = std::make_shared<LessonCommand>();
  CLI::App* tour = app.add_subcommand("tour", "run every lesson in turn, in this terminal");
  add_common_options(*tour, *tour_cmd);
  add_trace_option(*tour, tour_cmd->trace);
  tour->add_option("--from", tour_cmd->name,
                   "start at this lesson (the tour says which when you leave it early)");
  tour->callback([tour_cmd] {
    apply_common(*tour_cmd);
    run_tour_here(tour_cmd->options, tour_cmd->name);
  });
}

}  // namespace ringlab::cli
