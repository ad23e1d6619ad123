#!/usr/bin/env bash
# Writes the zklock(1) man page from the tool's own help with help2man: the
# overview from `zklock --help`, then a COMMANDS section with `zklock help CMD`
# for every command it lists (and `zklock help CMD SUB` for each subcommand of
# one, as fence's, or bench's scenarios), so the page says what the binary
# does. bench and chaos describe themselves through zklock-bench, which must
# be beside zklock; a build without it leaves their sections out. The
# EXAMPLES section is man-examples.roff beside this script.
#
#   tools/zklock/man.sh ZKLOCK_BINARY OUTPUT
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 ZKLOCK_BINARY OUTPUT" >&2
  exit 2
fi
zklock=$1
out=$2
include=$(mktemp)
trap 'rm -f -- "$include"' EXIT

# The commands (or, given a command, its subcommands: zklock fence check) its help lists.
listed() { "$zklock" help "$@" | awk '/^Subcommands:/ { listing = 1; next } listing && /^  [a-z]/ { print $1 }'; }
# A section with `zklock help WORDS...`.
section() {
  echo ".SS \"zklock $*\""
  echo ".nf"
  # Lines that start with . or ' are roff requests: escape them.
  "$zklock" help "$@" | sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
  echo ".fi"
}
commands=$(listed)
[[ -n $commands ]] || { echo "man.sh: $zklock help listed no commands" >&2; exit 1; }
{
  echo "[COMMANDS]"
  for command in $commands; do
    if ! "$zklock" help "$command" >/dev/null 2>&1; then
      echo "man.sh: zklock help $command fails; no section for it: $("$zklock" help "$command" 2>&1)" >&2
      continue
    fi
    section "$command"
    for subcommand in $(listed "$command"); do section "$command" "$subcommand"; done
  done
  echo "[EXAMPLES]"
  cat "$(dirname "${BASH_SOURCE[0]}")/man-examples.roff"
  echo "[SEE ALSO]"
  echo "flock(1). The README and docs/ of zklock: the library, the lock recipe, fencing tokens."
} > "$include"

help2man --no-info --no-discard-stderr --section 1 --source "zklock" \
  --name "distributed locks on ZooKeeper: run a command under a lock, hold one, elect a leader, show a queue" \
  --include "$include" --output "$out" "$zklock"
