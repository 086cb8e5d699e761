// `ringlab sim OP --compare` (sim_compare.hpp).
//
// Every figure is a prediction on one topology, which the header names and
// explains: on the default fully connected topology a partner far away costs
// no more than a neighbour, so algorithms with fewer rounds win; on a
// physical ring (--topology ring, Horovod's setting) only neighbours share a
// wire, and the ring algorithm is the one that never crosses more than one.
// The auto column is the simulator's auto (forecast.hpp): the fastest
// predicted of the other columns. What a ProcessGroup's auto would run (the
// rule measured on real hosts) is printed under the table, with the sizes
// where the two differ.
#include "tools/sim_compare.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "bench/bench.hpp"
#include "primitives/algorithms.hpp"
#include "simulator/closed_form.hpp"

namespace ringlab::cli {

using namespace ringlab::sim;

std::string human_bytes(double b) {
  const char* units[] = {"B", "K", "M", "G", "T"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, b == static_cast<long long>(b) ? "%.0f%s" : "%.1f%s", b, units[u]);
  return buf;
}

std::string topology_assumes(const CostModel& model) {
  switch (model.topology) {
    case Topology::FullyConnected:
      return "fully_connected: a private link between every pair of ranks (one host's ranks, "
             "a full-bisection network), so a partner far away costs no more than a neighbour";
    case Topology::Ring:
      return "ring: the ranks wired in a ring 0-1-...-(P-1)-0, so a message to a rank d hops "
             "away crosses d links and shares each with the messages crossing it (Horovod's "
             "setting, where the ring algorithm is bandwidth-optimal)";
    case Topology::Switch:
      return "switch: " + std::to_string(model.ranks_per_switch) +
             " ranks per leaf switch, whose one uplink carries everything leaving or entering "
             "the group";
  }
  return "?";
}

namespace {

// One size's row: each algorithm's time (< 0: not priced) and which path
// answered it.
struct Row {
  std::size_t bytes = 0;
  std::vector<double> us;
  std::vector<std::string> how;
  std::vector<std::uint64_t> most_sent;  // the bytes the busiest rank sends
  std::vector<Step> steps;
  std::string rule;  // what a ProcessGroup's auto runs at this size ("" unless all_reduce)
};

// Table order; auto (all_reduce) last, as the table has it.
struct Columns {
  std::vector<std::string> names;
  std::size_t auto_column = ~std::size_t{0};
  std::vector<std::string> unpriced;  // "ring at 4K: why", once per algorithm
};

std::string path_of(const Forecast& f) {
  return f.path == PredictionPath::MessageLevel ? "message-level path"
         : f.path == PredictionPath::Recorded   ? "recorded run"
                                                : std::string(path_name(f.path));
}

Row price_row(const Scenario& base, std::size_t bytes, PredictionPath path, const CostModel& model,
              Columns& columns) {
  Row row;
  row.bytes = bytes;
  const CollectiveInfo& info = collective_info(base.collective);
  Scenario s = base;
  s.count = bytes / element_size(base.dtype) / info.size_blocks(base.ranks);
  for (std::size_t i = 0; i < columns.names.size(); ++i) {
    row.us.push_back(-1);
    row.how.emplace_back();
    row.most_sent.push_back(0);
    row.steps.push_back(0);
    if (i == columns.auto_column) continue;  // from the others below
    s.algorithm = columns.names[i];
    try {
      const Forecast f = forecast(s, model, path);
      row.us[i] = f.prediction.total_s * 1e6;
      row.how[i] = path_of(f);
      row.most_sent[i] = *std::max_element(f.bytes_sent.begin(), f.bytes_sent.end());
      row.steps[i] = f.steps;
    } catch (const std::invalid_argument& error) {
      const std::string head = columns.names[i] + " ";
      const bool noted = std::any_of(columns.unpriced.begin(), columns.unpriced.end(),
                                     [&](const std::string& u) { return u.starts_with(head); });
      if (!noted)
        columns.unpriced.push_back(head + "from " + human_bytes(static_cast<double>(bytes)) + ": " +
                                   error.what());
    }
  }
  if (columns.auto_column < columns.names.size()) {
    s.algorithm = columns.names[columns.auto_column];
    row.rule = measured_auto_choice(s, model);
  }
  return row;
}

// The fastest priced column but auto (the first on a tie, as forecast's
// auto picks), or names.size() when none is priced.
std::size_t fastest_of(const Row& row, const Columns& columns) {
  std::size_t best = columns.names.size();
  for (std::size_t i = 0; i < row.us.size(); ++i)
    if (i != columns.auto_column && row.us[i] >= 0 &&
        (best == columns.names.size() || row.us[i] < row.us[best]))
      best = i;
  return best;
}

void print_row(Row& row, const Columns& columns) {
  const std::size_t best = fastest_of(row, columns);
  if (columns.auto_column < columns.names.size() && best < columns.names.size()) {
    row.us[columns.auto_column] = row.us[best];
    row.how[columns.auto_column] = row.how[best];
    row.most_sent[columns.auto_column] = row.most_sent[best];
    row.steps[columns.auto_column] = row.steps[best];
  }
  std::printf("%10s", human_bytes(static_cast<double>(row.bytes)).c_str());
  for (std::size_t i = 0; i < row.us.size(); ++i) {
    if (row.us[i] < 0)
      std::printf(" %20s", "-");
    else
      std::printf(" %19.2f%s", row.us[i], i == best ? "*" : " ");
  }
  std::printf("\n");
}

// "1K..64K recursive_doubling, 256K..256M rabenseifner": consecutive sizes
// with the same name, as ranges.
std::string ranges(const std::vector<Row>& rows, const std::vector<std::string>& picks) {
  std::string out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::size_t j = i;
    while (j + 1 < rows.size() && picks[j + 1] == picks[i]) ++j;
    out += (out.empty() ? "" : ", ") + human_bytes(static_cast<double>(rows[i].bytes));
    if (j > i) out += ".." + human_bytes(static_cast<double>(rows[j].bytes));
    out += " " + picks[i];
    i = j;
  }
  return out;
}

// "256K..256M, where rabenseifner takes 1.97x to 5.66x as long as ring":
// the sizes where the measured rule's choice is predicted slower than
// auto's, grouped by the two names.
std::string where_slower(const std::vector<Row>& rows, const std::vector<std::string>& picks,
                         const Columns& columns) {
  std::string out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (picks[i] == rows[i].rule || picks[i] == "-") continue;
    double least = 0, most = 0;
    std::size_t j = i;
    for (; j < rows.size() && picks[j] == picks[i] && rows[j].rule == rows[i].rule; ++j) {
      const auto at = [&](const std::string& name) {
        return rows[j].us[static_cast<std::size_t>(
            std::find(columns.names.begin(), columns.names.end(), name) - columns.names.begin())];
      };
      const double ratio = at(rows[j].rule) / at(picks[j]);
      least = j == i ? ratio : std::min(least, ratio);
      most = j == i ? ratio : std::max(most, ratio);
    }
    char upto[32] = "";
    if (most > least) std::snprintf(upto, sizeof upto, " to %.2fx", most);
    char text[200];
    std::snprintf(text, sizeof text, "%s%s%s%s, where %s takes %.2fx%s as long as %s",
                  out.empty() ? "" : "; ", human_bytes(static_cast<double>(rows[i].bytes)).c_str(),
                  j - 1 > i ? ".." : "",
                  j - 1 > i ? human_bytes(static_cast<double>(rows[j - 1].bytes)).c_str() : "",
                  rows[i].rule.c_str(), least, upto, picks[i].c_str());
    out += text;
    i = j - 1;
  }
  return out;
}

// What auto picked, and how the measured rule relates (all_reduce only).
void print_auto(const std::vector<Row>& rows, const Columns& columns) {
  std::vector<std::string> picks, rules;
  for (const Row& row : rows) {
    const std::size_t best = fastest_of(row, columns);
    picks.push_back(best < columns.names.size() ? columns.names[best] : "-");
    rules.push_back(row.rule);
  }
  std::printf(
      "# auto = the fastest predicted here (the simulator's auto picks by prediction): %s\n",
      ranges(rows, picks).c_str());
  const std::string slower = where_slower(rows, picks, columns);
  std::printf(
      "# a ProcessGroup's auto follows the rule measured on real hosts (all_reduce_auto_choice, "
      "primitives/all_reduce.cpp): %s; %s\n",
      ranges(rows, rules).c_str(),
      slower.empty() ? "the prediction agrees at every size here"
                     : ("the prediction differs at " + slower).c_str());
}

void print_header(const Scenario& base, const CostModel& model, const Columns& columns) {
  std::printf(
      "# ringlab sim --compare: %s on %d ranks, %s, alpha %.3g us, bandwidth %.3g GB/s, gamma "
      "%.3g ns/B\n",
      std::string(collective_name(base.collective)).c_str(), base.ranks,
      std::string(dtype_name(base.dtype)).c_str(), model.alpha_s * 1e6, model.bandwidth_Bps / 1e9,
      model.gamma_s_per_byte * 1e9);
  std::printf("# every figure assumes the topology %s\n", topology_assumes(model).c_str());
  std::printf(
      "# predicted time in us; * = fastest%s\n%10s",
      columns.auto_column < columns.names.size() ? "; auto = the fastest of the others" : "",
      "size");
  for (const auto& n : columns.names) std::printf(" %20s", n.c_str());
  std::printf("\n");
}

// Beside each time, what it is made of: the bytes the busiest rank sends
// (bandwidth) and the steps (latency, alpha each).
void print_bytes(const std::vector<Row>& rows, const Columns& columns) {
  std::printf("# bytes sent per rank (the busiest rank's) and steps, beside each time above\n%10s",
              "size");
  for (const auto& n : columns.names) std::printf(" %20s", n.c_str());
  std::printf("\n");
  for (const Row& row : rows) {
    std::printf("%10s", human_bytes(static_cast<double>(row.bytes)).c_str());
    for (std::size_t i = 0; i < row.us.size(); ++i) {
      if (row.us[i] < 0) {
        std::printf(" %20s", "-");
        continue;
      }
      const std::string cell = human_bytes(static_cast<double>(row.most_sent[i])) + " in " +
                               std::to_string(row.steps[i]) + " steps";
      std::printf(" %20s", cell.c_str());
    }
    std::printf("\n");
  }
}

void print_crossovers(const std::vector<Row>& rows, const Columns& columns) {
  std::string previous;
  std::vector<std::string> lines;
  for (const Row& row : rows) {
    const std::size_t best = fastest_of(row, columns);
    if (best == columns.names.size()) continue;
    if (!previous.empty() && previous != columns.names[best])
      lines.push_back("from " + human_bytes(static_cast<double>(row.bytes)) + ": " +
                      columns.names[best] + " beats " + previous);
    previous = columns.names[best];
  }
  if (lines.empty() && !previous.empty())
    std::printf("# no crossover: %s is fastest at every size\n", previous.c_str());
  for (const auto& line : lines) std::printf("# crossover %s\n", line.c_str());
  std::printf(
      "# small messages are latency-bound (alpha x steps), large ones bandwidth-bound "
      "(bytes x beta on the busiest port or link)\n");
}

void print_answered_by(const std::vector<Row>& rows, const Columns& columns) {
  std::string how;
  for (std::size_t i = 0; i < columns.names.size(); ++i) {
    std::vector<std::string> paths;
    for (const Row& row : rows)
      if (!row.how[i].empty() && std::find(paths.begin(), paths.end(), row.how[i]) == paths.end())
        paths.push_back(row.how[i]);
    std::string joined;
    for (const auto& p : paths) joined += (joined.empty() ? "" : " and ") + p;
    if (!joined.empty()) how += (how.empty() ? "" : ", ") + columns.names[i] + " by the " + joined;
  }
  std::printf("# answered by: %s\n", how.c_str());
  for (const auto& line : columns.unpriced) std::printf("# - = not priced: %s\n", line.c_str());
}

std::size_t column_of(const Columns& columns, const std::string& name) {
  return static_cast<std::size_t>(std::find(columns.names.begin(), columns.names.end(), name) -
                                  columns.names.begin());
}

// all_reduce: why the ring is bandwidth-optimal, why Rabenseifner ties or
// beats it all the same where any partner is as near as a neighbour, and
// why the ring takes more steps than the article's 2(N-1) where it cuts its
// blocks into segments.
void print_ring_notes(const Scenario& base, const std::vector<Row>& rows, const Columns& columns,
                      const CostModel& model) {
  const std::size_t ring = column_of(columns, "ring"), raben = column_of(columns, "rabenseifner");
  if (base.collective != Collective::AllReduce || ring >= columns.names.size() ||
      rows.back().us[ring] < 0)
    return;
  const int n = base.ranks;
  // The largest size that is N equal blocks, where 2(N-1)/N holds exactly.
  std::string here;
  for (auto row = rows.rbegin(); row != rows.rend() && here.empty(); ++row)
    if (row->us[ring] >= 0 && (row->bytes / element_size(base.dtype)) % n == 0)
      here = " (here 2 x " + std::to_string(n - 1) + "/" + std::to_string(n) + " x " +
             human_bytes(static_cast<double>(row->bytes)) + " = " +
             human_bytes(static_cast<double>(row->most_sent[ring])) + ")";
  std::printf(
      "# ring is bandwidth-optimal: each rank sends 2(N-1)/N of the data, whatever N%s, and no "
      "all_reduce sends less: each rank's share of the sum must leave it, and the others' "
      "shares reach it\n",
      here.c_str());
  if (raben < columns.names.size() && rows.front().us[raben] >= 0)
    std::printf(
        "# rabenseifner sends the same 2(N-1)/N (N a power of two; with a rank folded in first, "
        "the busiest sends more), in %u steps at %s where the ring takes %u: %s\n",
        rows.front().steps[raben], human_bytes(static_cast<double>(rows.front().bytes)).c_str(),
        rows.front().steps[ring],
        model.topology == Topology::FullyConnected
            ? "on this fully connected network a far partner costs no more than a neighbour, so "
              "it ties the ring on bytes and beats it on latency"
            : "fewer steps, but here its far partners' messages share links, which the ring's "
              "never do");
  for (auto row = rows.rbegin(); row != rows.rend(); ++row) {
    if (row->us[ring] < 0 || row->steps[ring] == static_cast<Step>(2 * (n - 1))) continue;
    Scenario s = base;
    s.algorithm = "ring";
    s.count = row->bytes / element_size(base.dtype);
    std::printf("# ring's %u steps at %s, not the article's 2(N-1) = %d: %s\n", row->steps[ring],
                human_bytes(static_cast<double>(row->bytes)).c_str(), 2 * (n - 1),
                segment_note(s).c_str());
    return;
  }
}

}  // namespace

void run_compare(const Scenario& base, const std::string& sizes, PredictionPath path,
                 const CostModel& model) {
  const auto [min_bytes, max_bytes] = bench::parse_size_range(sizes);
  Columns columns;
  columns.names = algorithm_names(base.collective);
  for (std::size_t i = 0; i < columns.names.size(); ++i) {
    Scenario s = base;
    s.algorithm = columns.names[i];
    if (is_all_reduce_auto(s)) columns.auto_column = i;
  }
  std::vector<Row> rows;
  for (std::size_t bytes = std::max<std::size_t>(min_bytes, element_size(base.dtype));
       bytes <= max_bytes; bytes *= 4) {
    rows.push_back(price_row(base, bytes, path, model, columns));
    if (rows.size() == 1) {
      if (fastest_of(rows.back(), columns) == columns.names.size() && !columns.unpriced.empty())
        throw std::invalid_argument("no algorithm can be priced: " + columns.unpriced.front());
      print_header(base, model, columns);
    }
    print_row(rows.back(), columns);
    std::fflush(stdout);
  }
  print_bytes(rows, columns);
  print_crossovers(rows, columns);
  print_ring_notes(base, rows, columns, model);
  if (columns.auto_column < columns.names.size()) print_auto(rows, columns);
  print_answered_by(rows, columns);
  if (model.topology == Topology::FullyConnected && base.collective == Collective::AllReduce)
    std::printf(
        "# ranks wired in a ring, where only neighbours share a link (Horovod's \"ring is "
        "bandwidth-optimal\"): add --topology ring\n");
}

}  // namespace ringlab::cli
