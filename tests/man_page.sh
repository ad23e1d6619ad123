#!/usr/bin/env bash
# The built zklock(1) renders without a warning from man and describes every
# command the binary lists (and each subcommand of one, as fence's), with the
# options of each.
#
#   tests/man_page.sh MAN_PAGE ZKLOCK_BINARY
set -euo pipefail
page=$1
zklock=$2
[[ -s $page ]] || { echo "man_page: $page is missing or empty" >&2; exit 1; }
warnings=$(MANWIDTH=100 man --warnings -l "$page" 2>&1 >/dev/null)
[[ -z $warnings ]] || { echo "man_page: man warns: $warnings" >&2; exit 1; }
text=$(MANWIDTH=100 man -l "$page" 2>/dev/null)
status=0
listed() { "$zklock" help "$@" | awk '/^Subcommands:/ { listing = 1; next } listing && /^  [a-z]/ { print $1 }'; }
for command in $(listed); do
  grep -q "^   zklock $command\$" <<<"$text" || { echo "man_page: no section for zklock $command" >&2; status=1; }
  # A command's subcommands (zklock fence check): a section each, with its usage.
  for subcommand in $(listed "$command"); do
    grep -q "^   zklock $command $subcommand\$" <<<"$text" ||
      { echo "man_page: no section for zklock $command $subcommand" >&2; status=1; }
    grep -q "Usage: zklock $command $subcommand" <<<"$text" ||
      { echo "man_page: no usage of zklock $command $subcommand" >&2; status=1; }
  done
done
for option in --conflict-exit-code --connect-timeout --shared --name; do
  grep -q -- "$option" <<<"$text" || { echo "man_page: $option is not described" >&2; status=1; }
done
[[ $status -eq 0 ]] && echo "man_page: $page describes every command"
exit $status
