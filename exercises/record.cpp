#include "exercises/record.hpp"

#include <cstring>
#include <istream>
#include <ostream>
#include <stdexcept>

#include "exercises/explain.hpp"
#include "simulator/build_record.hpp"
#include "simulator/fiber_world.hpp"

namespace ringlab::exercises {

namespace {

constexpr std::size_t kValueBudgetBytes = std::size_t{16} << 20;
constexpr char kMagic[] = "ringlab exercise recording 1\n";

std::size_t case_bytes(const Exercise& exercise, const Case& c) {
  std::size_t elements = 0;
  for (const BufferPlan& plan : buffers_of(exercise, c, 0)) elements += plan.count;
  return elements * element_size(c.dtype) * static_cast<std::size_t>(c.ranks);
}

// ---- a plain binary stream of the logs (both ends are this build) -------------

template <typename T>
void put(std::ostream& out, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.write(reinterpret_cast<const char*>(&value), sizeof value);
}
void put(std::ostream& out, const std::string& text) {
  put(out, std::uint64_t{text.size()});
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}
template <typename T>
void put_vector(std::ostream& out, const std::vector<T>& values) {
  put(out, std::uint64_t{values.size()});
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(T)));
}

template <typename T>
T get(std::istream& in) {
  T value{};
  if (!in.read(reinterpret_cast<char*>(&value), sizeof value))
    throw std::runtime_error("the recording ends too early");
  return value;
}
std::string get_string(std::istream& in) {
  std::string text(get<std::uint64_t>(in), '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(text.size())))
    throw std::runtime_error("the recording ends too early");
  return text;
}
template <typename T>
std::vector<T> get_vector(std::istream& in) {
  const auto n = get<std::uint64_t>(in);
  if (n > (std::uint64_t{1} << 34) / sizeof(T))
    throw std::runtime_error("the recording is damaged");
  std::vector<T> values(n);
  if (!in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(n * sizeof(T))))
    throw std::runtime_error("the recording ends too early");
  return values;
}

}  // namespace

Recorded record_case(const Exercise& exercise, const Function& fn, const Case& c, bool values,
                     const std::string& algorithm) {
  Recorded recorded;
  recorded.ranks.resize(static_cast<std::size_t>(c.ranks));
  recorded.logs.resize(static_cast<std::size_t>(c.ranks));
  sim::RecordOptions options;
  options.values = values && case_bytes(exercise, c) <= kValueBudgetBytes;
  options.scratch_dtype = c.dtype;
  WatchWorld watch;
  try {
    sim::FiberWorld world(c.ranks, /*move_data=*/true);
    KnowledgeWorld knowledge;
    world.run([&](Transport& inner) {
      const auto r = static_cast<std::size_t>(inner.rank());
      sim::RecordingTransport recorder(inner, options);
      auto knowing = knowing_transport(recorder, knowledge);
      RankOutcome& mine = recorded.ranks[r];
      try {
        const bool barrier = exercise.shape == Shape::Barrier;
        mine = run_case_on_rank(
            exercise, fn, c,
            {inner, *knowing, &recorder, 0, barrier ? knowing.get() : nullptr, &watch});
      } catch (const std::exception& e) {
        mine.ran = true;
        mine.error = e.what();
        mine.peer_failed = dynamic_cast<const PeerError*>(&e) != nullptr;
        throw;
      }
      recorded.logs[r] = recorder.take_log();
    });
  } catch (const std::exception& e) {
    recorded.error = e.what();
    if (recorded.error.rfind("deadlock", 0) == 0 && every_rank_receives_first(watch))
      recorded.error = receive_first_deadlock(recorded.error);
  }
  recorded.info.operation =
      std::string(exercise.collective.empty() ? exercise.name : exercise.collective);
  recorded.info.algorithm = algorithm;
  recorded.info.dtype = c.dtype;
  recorded.info.op = c.op;
  recorded.info.root = c.root;
  recorded.info.count = c.count;
  recorded.info.values_recorded = options.values;
  if (!options.values) recorded.info.values_note = "values not recorded: the case is too large";
  if (recorded.error.empty()) recorded.run = sim::build_run(recorded.logs, recorded.info);
  return recorded;
}

void write_recording(std::ostream& out, const std::vector<sim::RankLog>& logs,
                     const sim::RunInfo& info) {
  out.write(kMagic, sizeof kMagic - 1);
  put(out, info.operation);
  put(out, info.algorithm);
  put(out, info.dtype);
  put(out, info.op);
  put(out, info.root);
  put(out, std::uint64_t{info.count});
  put(out, info.values_recorded);
  put(out, info.values_note);
  put(out, std::uint64_t{logs.size()});
  for (const sim::RankLog& log : logs) {
    put(out, log.rank);
    put(out, log.world_size);
    put(out, std::uint64_t{log.regions.size()});
    for (const sim::LoggedRegion& region : log.regions) {
      put(out, region.name);
      put(out, region.kind);
      put(out, region.dtype);
      put(out, std::uint64_t{region.count});
      put(out, std::uint64_t{region.input_offset});
      put(out, std::uint64_t{region.input_count});
      put(out, std::uint64_t{region.initial_values});
      put(out, std::uint64_t{region.alloc_event});
    }
    put_vector(out, log.events);
    std::vector<std::uint64_t> event_values;
    for (const auto& [before, after] : log.event_values) {
      event_values.push_back(before);
      event_values.push_back(after);
    }
    put_vector(out, event_values);
    put_vector(out, log.values);
  }
  if (!out) throw std::runtime_error("could not write the recording");
}

sim::Run read_recording(std::istream& in) {
  char magic[sizeof kMagic - 1];
  if (!in.read(magic, sizeof magic) || std::memcmp(magic, kMagic, sizeof magic) != 0)
    throw std::runtime_error("not a recording of an exercise");
  sim::RunInfo info;
  info.operation = get_string(in);
  info.algorithm = get_string(in);
  info.dtype = get<DType>(in);
  info.op = get<ReduceOp>(in);
  info.root = get<int>(in);
  info.count = get<std::uint64_t>(in);
  info.values_recorded = get<bool>(in);
  info.values_note = get_string(in);
  std::vector<sim::RankLog> logs(get<std::uint64_t>(in) & 0xFFFF);
  for (sim::RankLog& log : logs) {
    log.rank = get<int>(in);
    log.world_size = get<int>(in);
    log.regions.resize(get<std::uint64_t>(in) & 0xFFFFFF);
    for (sim::LoggedRegion& region : log.regions) {
      region.name = get_string(in);
      region.kind = get<sim::RegionKind>(in);
      region.dtype = get<DType>(in);
      region.count = get<std::uint64_t>(in);
      region.input_offset = get<std::uint64_t>(in);
      region.input_count = get<std::uint64_t>(in);
      region.initial_values = get<std::uint64_t>(in);
      region.alloc_event = get<std::uint64_t>(in);
    }
    log.events = get_vector<sim::Event>(in);
    const auto event_values = get_vector<std::uint64_t>(in);
    for (std::size_t i = 0; i + 1 < event_values.size(); i += 2)
      log.event_values.emplace_back(event_values[i], event_values[i + 1]);
    log.values = get_vector<std::byte>(in);
  }
  return sim::build_run(std::move(logs), std::move(info));
}

}  // namespace ringlab::exercises
