#!/usr/bin/env bash
# Runs a README command on a fresh, minimal Debian 12: a
# `debootstrap --variant=minbase bookworm` chroot with nothing else installed,
# and a clean clone of this repository's HEAD in it (what is not committed is
# not in it). README's commands install what they need themselves
# (tools/deps.sh); this is how to see that they still do. Not part of ctest:
# it downloads Debian (about 100 MB, then the packages of tools/deps.sh) and
# builds everything from nothing, which takes as long as on a fresh machine.
# Run it before each release of the README.
#
#   tools/fresh_debian_check.sh [--mirror URL] [--keep] [-- COMMAND...]
#     COMMAND     what to run in the clone (default: bash tools/test.sh)
#     --mirror    the Debian mirror (default http://deb.debian.org/debian)
#     --keep      keep the chroot (its path is printed) instead of deleting it
#
# As root on Debian (debootstrap: apt-get install debootstrap), with network.
# The chroot shares the machine's kernel, network and /dev; the tests that
# need network namespaces skip there with their reason, as on any machine
# that does not allow them. Prints the command's phase times and the total.
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/.." && pwd)
mirror=http://deb.debian.org/debian keep=0
command=(bash tools/test.sh)
while (($#)); do
  case $1 in
    --mirror) mirror=$2; shift ;;
    --keep) keep=1 ;;
    --) shift; command=("$@"); break ;;
    *) echo "fresh_debian_check.sh: unknown option '$1' (see the top of this file)" >&2; exit 2 ;;
  esac
  shift
done
if ((EUID != 0)); then
  echo "fresh_debian_check.sh: run it as root (debootstrap and chroot need root)" >&2
  exit 1
fi
if ! command -v debootstrap >/dev/null; then
  echo "fresh_debian_check.sh: debootstrap is missing: apt-get install debootstrap" >&2
  exit 1
fi

root=$(mktemp -d "${TMPDIR:-/var/tmp}/ringlab-fresh-debian-XXXXXX")
chmod 755 "$root"  # apt downloads as the user _apt, who must reach its folders
mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; --i)); do umount -l "${mounted[i]}" || true; done
  # And what the command mounted itself (`ip netns add` mounts run/netns),
  # deepest first, so that nothing below the chroot stays busy.
  local target targets
  targets=$(findmnt -rn -o TARGET | grep "^$root/" | sort -r || true)
  for target in $targets; do umount -l "$target" || true; done
  if ((keep)); then
    echo "the chroot is kept in $root"
  else
    rm -rf --one-file-system "$root"
  fi
}
trap cleanup EXIT

start=$SECONDS
echo "== debootstrap --variant=minbase bookworm $root"
debootstrap --variant=minbase bookworm "$root" "$mirror" > "$root.debootstrap.log" 2>&1 || {
  tail -n 20 "$root.debootstrap.log" >&2
  echo "fresh_debian_check.sh: debootstrap failed (log: $root.debootstrap.log)" >&2
  exit 1
}
rm -f "$root.debootstrap.log"
echo "== debootstrap: $((SECONDS - start)) s"

# What a machine has that a chroot does not: /proc, /sys, /dev, a resolver,
# and /etc/hosts with the lines Debian's installer writes, localhost and the
# machine's name, which the chroot shares (torchrun --standalone reaches its
# store at localhost and its ranks at the machine's name).
for fs in proc sys dev dev/pts; do
  mkdir -p "$root/$fs"
  case $fs in
    proc) mount -t proc proc "$root/proc" ;;
    sys) mount -t sysfs sysfs "$root/sys" ;;
    *) mount --bind "/$fs" "$root/$fs" ;;
  esac
  mounted+=("$root/$fs")
done
mount -t tmpfs tmpfs "$root/dev/shm" && mounted+=("$root/dev/shm")
cp /etc/resolv.conf "$root/etc/resolv.conf"
[[ -e $root/etc/hosts ]] ||
  printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' \
    "$(hostname)" > "$root/etc/hosts"

# A clean clone, as CI takes one (the chroot has no git: clone from here).
git clone --quiet --no-hardlinks "$source_dir" "$root/root/ringlab"

echo "== in the chroot, in /root/ringlab: ${command[*]}"
run_start=$SECONDS
status=0
chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  bash -c 'cd /root/ringlab && "$@"' bash "${command[@]}" || status=$?
echo "== ${command[*]}: exit status $status after $((SECONDS - run_start)) s" \
     "(machine: $(nproc) cores; wall time, which includes waiting for a busy CPU)"
exit "$status"
