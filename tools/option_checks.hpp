// Checks of option values that more than one command needs.
//
// Options that take a real number. CLI11 reads them with strtold, which
// takes "nan", "inf" and "1e999" (an infinity once it is a double), and its
// Range lets NaN through (every comparison with NaN is false): `lesson train
// --lr nan` trained on NaN. Every FLOAT option refuses what is not a finite
// number, once, here: main() walks the whole command line and puts
// finite_number() first on each, so an option added later cannot forget it.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace ringlab::cli {

// The check every FLOAT option gets: "--alpha: nan is not allowed: give a
// finite number". No description, so the help does not change.
CLI::Validator finite_number();

// A finite number from `min` to `max`, said in a few words (CLI11's Range
// prints its bounds as 0.000000): "--lr: 2000 is not allowed: give a
// learning rate from 0 to 1000". `what`: "a learning rate".
CLI::Validator real_number(double min, double max, const std::string& what);

// A finite number above 0, at most `max` (a bandwidth: 0 would make every
// transfer take for ever): "--bandwidth: 0 is not allowed: give a bandwidth
// in GB/s above 0, at most 1000000".
CLI::Validator positive_number(double max, const std::string& what);

// Puts finite_number() first on every option whose type is FLOAT (a double,
// an optional<double>, a list of them), in `app` and its subcommands at
// every depth. Call it once every command has added its options.
void refuse_non_finite_numbers(CLI::App& app);

// An option naming a file the run will write (a trace, a cost model): the
// path is checked before the run, with the error ops/atomic_file would give
// after it: "--trace: cannot write trace file '/nonexistent/dir/t.json': the
// folder '/nonexistent/dir' does not exist: create it first ...". A folder,
// a device or a FIFO in its place is refused the same way. `what`: "trace
// file".
CLI::Validator file_to_write(const std::string& what);

}  // namespace ringlab::cli
