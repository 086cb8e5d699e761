#!/usr/bin/env bash
# README.md as a reader follows it (issue 35, item 5):
#   1. every file README.md and docs/*.md link to, and every .md file README
#      names in its text, exists where it says (README once named
#      article-outputs.md, which was not in the tree);
#   2. no shell transcript of README (a `$ ` line) runs `ringlab` from PATH:
#      README's commands run the build tree's, `$ringlab` (its elastic
#      example once started `ringlab run ... ringlab lesson`, which fails
#      as written), and `ringlab=` is set before the first `$ringlab`.
# Usage: readme.sh SOURCE_DIR
set -uo pipefail
src=${1:?usage: readme.sh SOURCE_DIR}
failed=0
fail() { echo "FAIL: $*"; failed=1; }

for md in "$src/README.md" "$src"/docs/*.md; do
  dir=$(dirname "$md")
  # [text](target): relative targets, without their #anchor.
  while IFS= read -r target; do
    [ -e "$dir/$target" ] || fail "${md#"$src"/} links to $target, which is not in the tree"
  done < <(grep -oE '\]\([^)]+\)' "$md" | sed -E 's/^\]\(//; s/\)$//; s/#.*//' |
             grep -vE '^(https?:|mailto:|$)' | sort -u)
done

while IFS= read -r name; do
  [ -e "$src/$name" ] || fail "README.md names $name, which is not in the tree"
done < <(grep -oE '[A-Za-z0-9_./-]+\.md\b' "$src/README.md" | sort -u)

# A transcript's command: the `$ ` line and the lines it continues onto (`\`).
while IFS= read -r line; do
  fail "README.md line ${line%%:*} runs ringlab from PATH; write \$ringlab: ${line#*:}"
done < <(awk '/^\$ / { start = NR; cmd = ""; going = 1 }
              going { cmd = cmd " " $0; if ($0 !~ /\\$/) { going = 0
                        if (cmd ~ /(^|[ ;&|(])ringlab /) print start ":" substr(cmd, 2) } }' \
           "$src/README.md")

defined=$(grep -nE '^ringlab=' "$src/README.md" | head -1 | cut -d: -f1)
used=$(grep -nF '$ringlab' "$src/README.md" | head -1 | cut -d: -f1)
if [ -z "$defined" ] || { [ -n "$used" ] && [ "$used" -lt "$defined" ]; }; then
  fail "README.md uses \$ringlab (line $used) before it sets ringlab= (line ${defined:-none})"
fi

[ "$failed" = 0 ] && echo "README's files and commands: ok"
exit "$failed"
