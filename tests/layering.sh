#!/usr/bin/env bash
# No #include (and no CMake link) runs from a lower layer to a higher one.
#
# The layers, bottom to top (README's folder table says why each exists):
#
#   ops                  dtype, reduce ops, Tensor, atomic file writes, CommError
#   net                  Boost.Asio once, socket helpers, wire integers, the log
#   store                the rendezvous store: server, client, job token proofs
#   transport            the Transport interface, inproc, the scratch pool
#     transport/tcp      siblings: the Boost.Asio transport and its rendezvous,
#     transport/nccl       the GPU transport, and NCCL's point-to-point rules on
#     transport/nccl_rules CPU threads; none includes another
#   primitives           collective algorithms, ProcessGroup
#   launcher simulator   siblings: neither includes the other
#   backends             the backend table, init_process_group(name)
#   training python      siblings: the training library; the Python package
#                        (torch.distributed's backend "ringlab")
#   training_sim         a training step recorded on the simulator, the overlap model
#   lessons exercises    siblings: the article programs; `ringlab exercise`
#   bench                benchmark rows
#   gui                  the walkthrough windows
#   tools                the ringlab command line
#
#   tests examples fuzz  may include anything
#
# A file may include its own folder and any folder on a lower line. Folders
# on one line are siblings and include neither each other nor anything above.
# Inside transport/, the interface knows none of its implementations, and
# tcp/ and nccl/ know nothing of each other (both meet their ranks through
# store/; the store and tcp/ share the helpers of net/). A folder of code
# that is not in the table fails the check until it is given a place here
# and in README.
#
# Usage: layering.sh SOURCE_DIR [LINKS_FILE]
#   LINKS_FILE (written by cmake/RinglabLayers.cmake): one line per link
#   between two ringlab libraries, "FROM_DIR FROM_TARGET TO_DIR TO_TARGET";
#   the same rule applies to them.
set -euo pipefail

source_dir=$1
links_file=${2:-}
cd "$source_dir"
if [[ -n $links_file && ! -f $links_file ]]; then
  echo "FAIL: no links file '$links_file' (configure the build first)" >&2
  exit 1
fi

# The files to check: what git tracks or would track, else every file.
list_files() {
  if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    git ls-files --cached --others --exclude-standard
  else
    find . -path ./.git -prune -o -path './build*' -prune -o -type f -print | sed 's|^\./||'
  fi
}
mapfile -t files < <(list_files | grep -E '\.(cpp|cc|hpp|h|cu|cuh|inl)$' |
                     while IFS= read -r f; do [[ -f $f ]] && echo "$f"; done)

# "FILE PATH" for every file, "PATH:LINE:#include ..." for every include,
# then "LINK FROM_DIR FROM_TARGET TO_DIR TO_TARGET" for every link; awk
# applies the table to all of them.
{
  if ((${#files[@]})); then
    printf 'FILE %s\n' "${files[@]}"
    grep -nHE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<][^">]*[">]' -- "${files[@]}" || true
  fi
  if [[ -n $links_file ]]; then sed 's/^/LINK /' "$links_file"; fi
} | awk -v files="${#files[@]}" -v links_given="$([[ -n $links_file ]] && echo 1 || echo 0)" '
  function level(unit) {
    if (unit == "ops") return 0
    if (unit == "net") return 3
    if (unit == "store") return 5
    if (unit == "transport") return 10
    if (unit == "transport/tcp" || unit == "transport/nccl" || unit == "transport/nccl_rules") return 11
    if (unit == "primitives") return 20
    if (unit == "launcher" || unit == "simulator") return 30
    if (unit == "backends") return 40
    if (unit == "training" || unit == "python") return 50
    if (unit == "training_sim") return 55
    if (unit == "lessons" || unit == "exercises") return 60
    if (unit == "bench") return 70
    if (unit == "gui") return 80
    if (unit == "tools") return 90
    if (unit == "tests" || unit == "examples" || unit == "fuzz") return "free"
    return "unknown"
  }
  # The unit of a path inside the tree: its top folder, or transport/tcp, transport/nccl.
  function unit_of(path) {
    if (path ~ /^transport\/(tcp|nccl|nccl_rules)(\/|$)/) { split(path, p, "/"); return p[1] "/" p[2] }
    sub(/\/.*/, "", path)
    return path
  }
  # Why unit `from` may not use unit `to`; "" when it may.
  function forbidden(from, to,    lf, lt) {
    if (from == to) return ""
    lf = level(from); lt = level(to)
    if (lf == "free") return ""
    if (lf == "unknown") return ""  # said once per folder (FILE lines)
    if (lt == "unknown") return ""  # not a ringlab folder: a system or same-folder header
    if (lt == "free") return to "/ is not a layer: only tests/, examples/ and fuzz/ may use it"
    if (lt + 0 > lf + 0) return to "/ is above " from "/"
    if (lt + 0 == lf + 0) return to "/ and " from "/ are siblings"
    return ""
  }
  $1 == "FILE" {
    if ($2 ~ /\// && level(unit_of($2)) == "unknown" && !(unit_of($2) in told)) {
      told[unit_of($2)] = 1
      bad[++n] = $2 ": " unit_of($2) "/ is not in the layer table (tests/layering.sh, README): give it a place there"
    }
    next
  }
  $1 == "LINK" {
    ++links
    why = forbidden(unit_of($2), unit_of($4))
    if (why != "") bad[++n] = "CMake: " $3 " (" $2 "/) links " $5 " (" $4 "/): " why
    next
  }
  {
    split($0, f, ":")
    file = f[1]; line = f[2]
    if (file !~ /\//) next  # files at the top of the tree hold no code
    included = $0
    sub(/^[^"<]*["<]/, "", included); sub(/[">].*$/, "", included)
    if (included !~ /\//) next  # a header of the file`s own folder
    dir = file; sub(/\/[^\/]*$/, "", dir)
    why = forbidden(unit_of(dir), unit_of(included))
    if (why != "") bad[++n] = file ":" line ": #include \"" included "\": " why
  }
  END {
    # A check that saw nothing proves nothing: the tree or the links file is
    # not what this script was pointed at.
    if (files == 0) bad[++n] = "no source files found under " ENVIRON["PWD"] ": is SOURCE_DIR the tree?"
    if (links_given && links == 0) bad[++n] = "the links file lists no library links: configure the build again"
    if (n) {
      print "FAIL: dependencies that run against the layers (the table is at the top of tests/layering.sh):" > "/dev/stderr"
      for (i = 1; i <= n; ++i) print "  " bad[i] > "/dev/stderr"
      exit 1
    }
    printf "layering: the includes of %d files and %d library links follow the layers\n", files, links + 0
  }'
