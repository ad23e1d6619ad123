#!/usr/bin/env bash
# Run the Apache Curator InterProcessMutex reference benchmark.
#
#   bench/curator/run.sh HOSTS SCENARIO CLIENTS OPS PATH [CuratorBench options...]
#
#   HOSTS     ZooKeeper connect string, e.g. 127.0.0.1:2181
#   SCENARIO  uncontended | contended | multi (InterProcessMultiLock; more
#             options follow: --lock-paths M --order sorted|unsorted --timeout-ms T)
#             | mixed (zklock bench --scenario mixed; needs --go-fifo FILE among
#             the options)
#   CLIENTS   number of clients/sessions (contended; uncontended always uses 1)
#   OPS       number of measured acquisitions
#   PATH      lock path, e.g. /bench/curator
#
# Prints one JSON line on stdout. Needs a JDK (java, javac) and the Debian
# package libcurator-recipes-java (which pulls in curator-framework/-client,
# zookeeper, guava, slf4j). slf4j-nop (libslf4j-java) silences logging.
#
# Environment: JAVA_DIR (default /usr/share/java), JAVA, JAVAC, JAVA_OPTS,
# XDG_CACHE_HOME (compiled class goes to $XDG_CACHE_HOME/zklock/curator-bench).
set -euo pipefail

die() { echo "curator-bench: $*" >&2; exit 1; }

if [ "$#" -lt 5 ]; then
    echo "usage: $0 HOSTS SCENARIO CLIENTS OPS PATH [OPTIONS...]" >&2
    exit 2
fi
hosts=$1 scenario=$2 clients=$3 ops=$4 lockpath=$5
shift 5

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$here/CuratorBench.java
[ -f "$src" ] || die "missing $src"

JAVA=${JAVA:-java}
JAVAC=${JAVAC:-javac}
command -v "$JAVA" >/dev/null 2>&1 || die "'$JAVA' not found (install a JDK, e.g. openjdk-17-jdk-headless)"
command -v "$JAVAC" >/dev/null 2>&1 || die "'$JAVAC' not found (install a JDK, e.g. openjdk-17-jdk-headless)"

jdir=${JAVA_DIR:-/usr/share/java}
# Curator 5.4 runtime: recipes -> framework -> client -> zookeeper (+ jute),
# guava (Debian's guava.jar already contains failureaccess), slf4j-api.
# The jars' manifest Class-Path entries pull in anything else they reference.
required=(curator-recipes curator-framework curator-client zookeeper zookeeper-jute guava slf4j-api)
cp=
missing=()
for j in "${required[@]}"; do
    if [ -f "$jdir/$j.jar" ]; then
        cp=${cp:+$cp:}$jdir/$j.jar
    else
        missing+=("$jdir/$j.jar")
    fi
done
if [ "${#missing[@]}" -ne 0 ]; then
    die "Curator jars missing: ${missing[*]}
install them with: sudo apt-get install libcurator-recipes-java"
fi
# No-op slf4j binding keeps stdout to the single JSON line; without it slf4j
# prints a one-time warning to stderr and logs nothing, which is also fine.
if [ -f "$jdir/slf4j-nop.jar" ]; then
    cp=$cp:$jdir/slf4j-nop.jar
fi

cache=${XDG_CACHE_HOME:-$HOME/.cache}/zklock/curator-bench
cls=$cache/CuratorBench.class
if [ ! -f "$cls" ] || [ "$src" -nt "$cls" ]; then
    mkdir -p "$cache"
    tmp=$(mktemp -d "$cache/.build.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    "$JAVAC" -nowarn -encoding UTF-8 -cp "$cp" -d "$tmp" "$src" \
        || die "javac failed for $src"
    # Move class files into place (rename is atomic within the cache dir).
    for f in "$tmp"/*.class; do
        mv -f "$f" "$cache/"
    done
    rm -rf "$tmp"
    trap - EXIT
fi

# shellcheck disable=SC2086  # JAVA_OPTS is intentionally word-split
exec "$JAVA" ${JAVA_OPTS:-} -cp "$cp:$cache" CuratorBench \
    --connect "$hosts" --scenario "$scenario" --clients "$clients" \
    --ops "$ops" --path "$lockpath" "$@"
