# bash completion for zklock: commands, and each command's options as its own
# `zklock help COMMAND` lists them (asked of the zklock being completed, so the
# list is that binary's); after `--`, the command to run.
_zklock() {
  local cur=${COMP_WORDS[COMP_CWORD]} zklock=${COMP_WORDS[0]} command= i
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ ${COMP_WORDS[i]} == -- ]]; then
      # run, elect: the words after -- are a command line of their own.
      COMPREPLY=($(compgen -c -- "$cur"))
      [[ $i -lt $((COMP_CWORD - 1)) ]] && COMPREPLY=($(compgen -f -- "$cur"))
      return
    fi
    [[ -z $command && ${COMP_WORDS[i]} != -* ]] && command=${COMP_WORDS[i]}
  done
  local commands
  commands=$("$zklock" help 2>/dev/null | awk '/^Subcommands:/ { listing = 1; next } listing && /^  [a-z]/ { print $1 }')
  if [[ -z $command || ($command == help && $cur != -*) ]]; then
    if [[ -z $command ]]; then
      COMPREPLY=($(compgen -W "$commands -h --help -V --version" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$commands" -- "$cur"))
    fi
    return
  fi
  if [[ $cur == -* ]]; then
    local options
    options=$("$zklock" help "$command" 2>/dev/null | sed -n 's/^  \(-[^ ]*\).*/\1/p' | tr ',' ' ')
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
}
complete -F _zklock zklock
