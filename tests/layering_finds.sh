#!/usr/bin/env bash
# tests/layering.sh fails where it should: on an include or a library link
# that runs against the layers, and on a check that saw nothing (no files,
# no links). It passes a small tree that keeps the layers, so a script that
# failed everything would fail here too.
# Usage: layering_finds.sh PATH/TO/layering.sh
set -uo pipefail
layering=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0

# expect PASS|FAIL WHAT TREE LINKS [TEXT]: runs the check on TREE with LINKS
# (a file, or "" for none) and wants it to pass or fail, printing TEXT.
expect() {
  local want=$1 what=$2 tree=$3 links=$4 text=${5:-} out status
  out=$(bash "$layering" "$tree" ${links:+"$links"} 2>&1)
  status=$?
  if [[ $want == PASS && $status -ne 0 ]] || [[ $want == FAIL && $status -eq 0 ]]; then
    echo "FAIL: $what: wanted $want, got status $status: $out"
    failures=$((failures + 1))
  elif [[ -n $text && $out != *"$text"* ]]; then
    echo "FAIL: $what: the output does not say '$text': $out"
    failures=$((failures + 1))
  else
    echo "ok: $what"
  fi
}

tree() {  # tree NAME: a fresh tree whose ops/ includes only itself
  mkdir -p "$scratch/$1/ops" "$scratch/$1/transport"
  printf '#include "ops/b.hpp"\n' > "$scratch/$1/ops/a.cpp"
  printf '#pragma once\n' > "$scratch/$1/ops/b.hpp"
  printf '#include "ops/b.hpp"\n' > "$scratch/$1/transport/t.cpp"
  echo "$scratch/$1"
}
good_links=$scratch/good_links.txt
echo "transport ringlab_transport_api ops ringlab_ops" > "$good_links"

expect PASS "a tree that keeps the layers" "$(tree good)" "$good_links"

up=$(tree up)
printf '#include "transport/transport.hpp"\n' >> "$up/ops/a.cpp"
expect FAIL "ops/ including transport/" "$up" "$good_links" "transport/ is above ops/"

bad_links=$scratch/bad_links.txt
echo "ops ringlab_ops transport ringlab_transport_api" > "$bad_links"
expect FAIL "ops/ linking transport/" "$(tree link)" "$bad_links" "transport/ is above ops/"

sibling=$(tree sibling)
mkdir -p "$sibling/transport/tcp" "$sibling/transport/nccl"
printf '#include "transport/nccl/x.hpp"\n' > "$sibling/transport/tcp/y.cpp"
expect FAIL "transport/tcp including transport/nccl" "$sibling" "$good_links" "are siblings"

unknown=$(tree unknown)
mkdir -p "$unknown/newfolder"
printf 'int x;\n' > "$unknown/newfolder/z.cpp"
expect FAIL "a folder not in the table" "$unknown" "$good_links" "not in the layer table"

mkdir -p "$scratch/empty"
expect FAIL "a tree with no source files" "$scratch/empty" "$good_links" "no source files"

: > "$scratch/no_links.txt"
expect FAIL "an empty links file" "$(tree nolinks)" "$scratch/no_links.txt" "no library links"

expect FAIL "a links file that is not there" "$(tree missing)" "$scratch/absent.txt" "no links file"

((failures == 0)) || exit 1
echo "layering.sh fails on each of the violations above"
