#!/usr/bin/env bash
# Run etcd's own Go Mutex (clientv3/concurrency) as zklock bench times it.
#
#   bench/etcd/run.sh --connect HOST:PORT --scenario uncontended|contended \
#       --clients K --ops N --path PREFIX [EtcdMutexBench options...]
#
# Prints one JSON line on stdout (see EtcdMutexBench.go). Builds the harness
# once, offline, with Debian's golang-go in GOPATH mode against the clientv3
# sources of golang-etcd-server-dev (as the tests build their Go peers).
#
# Environment: GO (default go), ZKLOCK_GO_PATH (default /usr/share/gocode),
# ZKLOCK_ETCD_BENCH_CACHE (where the binary goes; default
# $XDG_CACHE_HOME/zklock/etcd-bench), ZKLOCK_GO_CACHE (Go's build cache;
# default go-cache in it: the tests pass the one their Go peers were built
# with, which holds clientv3 compiled already).
set -euo pipefail

die() { echo "etcd-mutex-bench: $*" >&2; exit 1; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$here/EtcdMutexBench.go
[ -f "$src" ] || die "missing $src"
GO=${GO:-go}
gopath=${ZKLOCK_GO_PATH:-/usr/share/gocode}
command -v "$GO" >/dev/null 2>&1 || die "'$GO' not found (install golang-go)"
[ -f "$gopath/src/go.etcd.io/etcd/clientv3/concurrency/mutex.go" ] ||
    die "etcd's clientv3 is not in $gopath (install golang-etcd-server-dev)"

cache=${ZKLOCK_ETCD_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zklock/etcd-bench}
bin=$cache/etcd-mutex-bench
if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
    mkdir -p "$cache"
    tmp=$(mktemp "$cache/.build.XXXXXX")
    trap 'rm -f "$tmp"' EXIT
    GO111MODULE=off GOFLAGS= GOPATH=$gopath GOCACHE=${ZKLOCK_GO_CACHE:-$cache/go-cache} \
        "$GO" build -o "$tmp" "$src" >&2 || die "go build failed for $src"
    mv -f "$tmp" "$bin"  # atomic within the cache directory
    trap - EXIT
fi
exec "$bin" "$@"
