# Sourced by the netns_*.sh tests: two "hosts" on one machine, network
# namespaces joined by a veth pair, with 192.0.2.1 and 192.0.2.2 (TEST-NET-1,
# a documentation range that is never routed; the pair is connected to
# nothing else, so no packet leaves the machine).
#
# Before sourcing, set `test_name` (for messages) and `host_tag` (two letters
# that keep this test's names apart from the other netns tests'); a test with
# processes to stop defines stop_test_processes (called on exit, before the
# namespaces go). After it: ns_a, ns_b (the namespaces), veth_a, veth_b (their
# ends of the pair), addr_a, addr_b, work (a scratch folder, removed on exit),
# and skip (exit 77, ctest's "skipped", with the reason).
#
# It exits 77 when this machine cannot make the two hosts: not root, no `ip`,
# or any step of building them failing (a container without network
# privileges, a chroot whose / is not a mount point, where `ip netns exec`
# cannot make / a slave mount). Once both hosts exist, have their addresses
# and can run a command, any failure of ringlab is the test's to report.

skip() {
  echo "$test_name: skipped: $*"
  exit 77
}

[ "$(id -u)" = 0 ] || skip "creating network namespaces needs root (this runs as uid $(id -u))"
command -v ip >/dev/null || skip "the ip command is missing (Debian package iproute2)"

# Names unique to this run, so parallel runs do not collide. Interface names
# must stay within 15 characters.
ns_a=ringlab-${host_tag}a-$$
ns_b=ringlab-${host_tag}b-$$
veth_a=r${host_tag}a-$$
veth_b=r${host_tag}b-$$
addr_a=192.0.2.1
addr_b=192.0.2.2
work=$(mktemp -d "/tmp/ringlab-$test_name-XXXXXX")

remove_hosts() {
  declare -F stop_test_processes >/dev/null && stop_test_processes
  # Deleting a namespace deletes its end of the veth pair, and with it the other.
  ip netns del "$ns_a" 2>/dev/null
  ip netns del "$ns_b" 2>/dev/null
  ip link del "$veth_a" 2>/dev/null
  rm -rf "$work"
}
trap remove_hosts EXIT
trap 'exit 1' INT TERM

# The probe: build the two hosts. Any step that fails means this machine
# cannot make them, which is a reason to skip, not a failure of ringlab.
probe() {
  local step=$1
  shift
  "$@" >"$work/err" 2>&1 ||
    skip "cannot make two network namespaces joined by a veth pair here: '$step' failed: $(tr '\n' ' ' <"$work/err")"
}
probe "ip netns add $ns_a" ip netns add "$ns_a"
probe "ip netns add $ns_b" ip netns add "$ns_b"
probe "ip link add $veth_a type veth peer name $veth_b" ip link add "$veth_a" type veth peer name "$veth_b"
probe "ip link set $veth_a netns $ns_a" ip link set "$veth_a" netns "$ns_a"
probe "ip link set $veth_b netns $ns_b" ip link set "$veth_b" netns "$ns_b"
probe "ip -n $ns_a addr add $addr_a/24 dev $veth_a" ip -n "$ns_a" addr add "$addr_a/24" dev "$veth_a"
probe "ip -n $ns_b addr add $addr_b/24 dev $veth_b" ip -n "$ns_b" addr add "$addr_b/24" dev "$veth_b"
for ns in "$ns_a" "$ns_b"; do probe "ip -n $ns link set lo up" ip -n "$ns" link set lo up; done
probe "ip -n $ns_a link set $veth_a up" ip -n "$ns_a" link set "$veth_a" up
probe "ip -n $ns_b link set $veth_b up" ip -n "$ns_b" link set "$veth_b" up
for ns in "$ns_a" "$ns_b"; do probe "ip netns exec $ns true" ip netns exec "$ns" true; done
probe "$addr_a in $ns_a" sh -c "ip -n '$ns_a' -o addr show dev '$veth_a' | grep -q ' $addr_a/'"
probe "$addr_b in $ns_b" sh -c "ip -n '$ns_b' -o addr show dev '$veth_b' | grep -q ' $addr_b/'"
echo "$test_name: $ns_a has $addr_a ($veth_a), $ns_b has $addr_b ($veth_b)"
