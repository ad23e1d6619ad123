#!/usr/bin/env bash
# zklock's bash completion completes commands, a command's subcommands (fence
# check), each one's options (as the binary lists them), and the command after --.
#
#   tests/bash_completion.sh COMPLETION_SCRIPT ZKLOCK_BINARY
set -uo pipefail
# shellcheck disable=SC1090
source "$1"
zklock=$2
status=0

# complete WORD... : what TAB offers after these words (the last one is being typed).
complete_words() {
  COMP_WORDS=("$zklock" "$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _zklock
  printf '%s\n' "${COMPREPLY[@]}"
}

expect() {
  local want=$1
  shift
  local offers
  offers=$(complete_words "$@")  # whole: grep -q would close the pipe early (pipefail)
  if ! grep -qx -- "$want" <<<"$offers"; then
    echo "bash_completion: 'zklock $*<TAB>' does not offer $want (offers: $(tr '\n' ' ' <<<"$offers"))" >&2
    status=1
  fi
}

expect lock lo
expect status st
expect --watch status --wa
expect --version --ver
expect --conflict-exit-code run --conf
expect --shared lock --sh
expect --connect-timeout elect --connect-t
expect run help r
expect sh run /x -- s
# fence's subcommands, their options, and help for them.
expect check fence ch
expect write fence wr
expect --token fence check --to
expect check help fence ch
[[ $status -eq 0 ]] && echo "bash_completion: commands, subcommands, options and the command after -- complete"
exit $status
