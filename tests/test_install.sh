#!/usr/bin/env bash
# What a user of the library does, checked end to end:
#   1. cmake --install the build into a temporary prefix;
#   2. the installed headers are the public ones, and include only each other;
#   3. README's CMakeLists.txt for it finds the package (configured only);
#      build examples/all_reduce.cpp out of the tree, with find_package(ringlab)
#      from that prefix (examples/CMakeLists.txt), compiling that one file;
#   4. run it on 2 ranks with the installed `ringlab run`, and compare what it
#      prints with the closed form: rank r starts with [1 + 2r, 2 + 2r], and
#      after the all_reduce every rank holds [P*P, P*P + P] = [4, 6];
#   5. where the build made the Python package: it is installed under the
#      prefix where that interpreter looks for packages installed under a
#      prefix (for /usr/local, the default, on its own), and imports from there.
#
# Usage: test_install.sh BUILD_DIR SOURCE_DIR [PYTHON PACKAGE_DIR]
#   PYTHON, PACKAGE_DIR: the interpreter the package was built for and its
#   folder relative to the prefix (RINGLAB_PYTHON_INSTALL_DIR); none: not built.
set -euo pipefail

build=$(cd "$1" && pwd)
source=$(cd "$2" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ringlab-install-test-XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
include=$prefix/include/ringlab

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# Runs a step quietly; shows its output when it fails.
step() {
  local name=$1
  shift
  if ! "$@" > "$work/step.log" 2>&1; then
    cat "$work/step.log" >&2
    fail "$name: '$*' failed"
  fi
}

# ---- 1. install ------------------------------------------------------------------
step install cmake --install "$build" --prefix "$prefix"
[[ -x $prefix/bin/ringlab ]] || fail "the ringlab command was not installed to $prefix/bin"
[[ -f $prefix/lib/cmake/ringlab/ringlabConfig.cmake ]] || fail "no ringlabConfig.cmake"
[[ -f $prefix/lib/cmake/ringlab/ringlabConfigVersion.cmake ]] || fail "no ringlabConfigVersion.cmake"

# ---- 2. the headers --------------------------------------------------------------
# Every header included with quotes from an installed header is installed too
# (a public header that starts including a private one fails here, not in a
# user's build).
[[ -f $include/backends/backends.hpp ]] || fail "backends/backends.hpp is not installed under $include"
missing=""
while IFS= read -r header; do
  while IFS= read -r included; do
    [[ -f $include/$included ]] || missing+="  ${header#"$include"/} includes $included"$'\n'
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$header")
done < <(find "$include" -type f)
[[ -z $missing ]] || fail "installed headers include headers that are not installed (list them in
cmake/RinglabInstall.cmake's ringlab_public_headers, or stop including them):
$missing"
# The TCP engine, the store's wire format and their helpers stay private.
for private in transport/tcp/engine.hpp transport/tcp/framing.hpp transport/tcp/mesh.hpp \
               transport/tcp/transport_impl.hpp net/asio.hpp net/socket_util.hpp \
               store/protocol.hpp store/socket_util.hpp backends/rows.hpp; do
  [[ ! -e $include/$private ]] || fail "the private header $private was installed"
done
# The package asks for nothing only the executable or the tests need.
if grep -rniE 'cli11|doctest|boost' "$prefix/lib/cmake/ringlab"; then
  fail "ringlab's package names CLI11, doctest or Boost (above): users do not need them"
fi

# ---- 3. a program built against the prefix ------------------------------------------
# README's "Writing a program" shows examples/all_reduce.cpp (from its first
# #include on) and a CMakeLists.txt: the same program, and that file finds
# the package and its target.
readme=$source/README.md
readme_block() {  # the first ```LANGUAGE block of README's "Writing a program"
  awk -v language="$1" '/^## /{inside = ($0 == "## Writing a program")}
    inside && $0 == "```" language {taking = 1; next}
    taking && $0 == "```" {exit}
    taking {print}' "$readme"
}
if ! diff <(readme_block cpp) <(sed -n '/^#include/,$p' "$source/examples/all_reduce.cpp") >&2; then
  fail "README's program (<) is not examples/all_reduce.cpp (>): show the file as it is"
fi
mkdir "$work/readme"
readme_block cmake > "$work/readme/CMakeLists.txt"
cp "$source/examples/all_reduce.cpp" "$work/readme/"
grep -q find_package "$work/readme/CMakeLists.txt" || fail "no CMake block in README's \"Writing a program\""
# The recipe names no generator: CMake's default on Linux is "Unix Makefiles".
command -v make > /dev/null ||
  fail "README's recipe builds with CMake's default generator, which needs make: not installed
(tools/deps.sh installs it; on Debian: apt-get install make)"
step "README's CMakeLists.txt" cmake -S "$work/readme" -B "$work/readme/build" -DCMAKE_PREFIX_PATH="$prefix"

# examples/CMakeLists.txt on its own: build one program.
configure=(cmake -S "$source/examples" -B "$work/build" -DCMAKE_BUILD_TYPE=Release
           -DCMAKE_PREFIX_PATH="$prefix")
if command -v ninja > /dev/null; then configure+=(-G Ninja); fi
if command -v ccache > /dev/null; then configure+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
step configure "${configure[@]}"
found=$(sed -n 's/^ringlab_DIR:PATH=//p' "$work/build/CMakeCache.txt")
[[ $found == "$prefix/lib/cmake/ringlab" ]] ||
  fail "find_package(ringlab) found '$found', not the prefix just installed"
step build cmake --build "$work/build" --target example_all_reduce

# ---- 4. run it on 2 ranks ----------------------------------------------------------
world=2
expected=""
for ((r = 0; r < world; ++r)); do
  expected+="before all_reduce Rank $r has data tensor([$((1 + 2 * r)), $((2 + 2 * r))])"$'\n'
  expected+="after all_reduce Rank $r has data tensor([$((world * world)), $((world * world + world))])"$'\n'
done
status=0
env -u RANK -u WORLD_SIZE -u LOCAL_RANK -u MASTER_ADDR -u MASTER_PORT \
    -u RINGLAB_TRACE_DIR RINGLAB_TIMEOUT_MS=30000 \
    timeout 120 "$prefix/bin/ringlab" run --nproc-per-node "$world" -- "$work/build/all_reduce" \
    > "$work/run.out" 2> "$work/run.err" || status=$?
if ((status != 0)); then
  cat "$work/run.out" "$work/run.err" >&2
  fail "ringlab run --nproc-per-node $world -- all_reduce exited with status $status"
fi
# Lines of different ranks interleave in any order: compare them sorted.
if ! diff <(printf '%s' "$expected" | sort) <(sort "$work/run.out") >&2; then
  fail "all_reduce printed the lines marked > where the closed form says those marked <"
fi
echo "installed to a prefix, built examples/all_reduce.cpp against it, ran it on $world ranks: ok"

# ---- 5. the Python package -----------------------------------------------------------
python=${3:-}
package_dir=${4:-}
if [[ -n $python && -n $package_dir ]]; then
  package=$prefix/$package_dir/ringlab
  [[ -f $package/__init__.py && -f $package/torch.py ]] ||
    fail "the Python package ringlab is not installed in $prefix/$package_dir"
  compgen -G "$package/_ringlab*.so" > /dev/null || fail "no extension _ringlab*.so in $package"
  searched=$("$python" -c "import sysconfig; print(sysconfig.get_path('platlib'))")
  [[ $searched == */$package_dir ]] ||
    fail "$python looks for installed packages in $searched, not in PREFIX/$package_dir"
  imported=$(cd "$work" && env -u PYTHONPATH PYTHONPATH="$prefix/$package_dir" "$python" -c \
    "import ringlab; print(ringlab.__file__); print(ringlab.collectives())") ||
    fail "the installed package does not import"
  [[ $imported == "$package/__init__.py"* ]] || fail "imported ringlab from elsewhere: $imported"
  echo "the Python package is in $prefix/$package_dir ($python searches $searched): ok"
fi
