#!/usr/bin/env bash
# The built zklock(1) renders without a warning from man and describes every
# command the binary lists (and each subcommand of one, as fence's), with the
# options of each; and it names nothing of the machine that built it: a page
# generated anew by man.sh with $ZKLOCK_CONNECT set holds neither the source
# tree, nor the build tree, nor that value (nor does the built page hold the trees).
#
#   tests/man_page.sh MAN_PAGE ZKLOCK_BINARY MAN_SH SOURCE_DIR BUILD_DIR
set -euo pipefail
page=$1
zklock=$2
man_sh=$3
source_dir=$4
build_dir=$5
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
# EXAMPLES (man-examples.roff): the section, and the commands of the first hour in it.
examples=$(awk '/^EXAMPLES$/ { on = 1; next } on && /^[A-Z]/ { exit } on' <<<"$text")
[[ -n $examples ]] || { echo "man_page: no EXAMPLES section" >&2; status=1; }
for example in "zklock demo" "zklock server" "zklock run /locks/nightly-report -- ./report.sh" "zklock status"; do
  grep -qF -- "$example" <<<"$examples" || { echo "man_page: EXAMPLES has no $example" >&2; status=1; }
done
for option in --conflict-exit-code --connect-timeout --shared --name; do
  grep -q -- "$option" <<<"$text" || { echo "man_page: $option is not described" >&2; status=1; }
done

# The roff source as text: hyphens and backslashes unescaped, zero-width breaks gone.
as_text() { sed -e 's/\\-/-/g' -e 's/\\&//g' -e 's/\\e/\\/g' "$1"; }
sentinel=zklock-man-page-check.invalid:2181/from-the-environment
fresh=$(mktemp -d)
trap 'rm -rf -- "$fresh"' EXIT
ZKLOCK_CONNECT=$sentinel "$man_sh" "$zklock" "$fresh/zklock.1" 2>"$fresh/stderr" ||
  { echo "man_page: man.sh failed: $(cat "$fresh/stderr")" >&2; exit 1; }
for checked in "$page" "$fresh/zklock.1"; do
  text=$(as_text "$checked")
  for value in "$source_dir" "$build_dir" "$sentinel"; do
    [[ $checked == "$page" && $value == "$sentinel" ]] && continue  # the builder's environment is not known here
    if grep -qF -- "$value" <<<"$text"; then
      echo "man_page: $checked names $value: $(grep -F -- "$value" <<<"$text" | head -n 3)" >&2
      status=1
    fi
  done
done
[[ $status -eq 0 ]] && echo "man_page: $page describes every command and names no build path or environment value"
exit $status
