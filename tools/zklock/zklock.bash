# bash completion for zklock: commands, a command's subcommands (zklock fence
# check), and each one's options as its own `zklock help COMMAND [SUBCOMMAND]`
# lists them (asked of the zklock being completed, so the list is that
# binary's); after `--`, the command to run.
_zklock_listed() {  # the commands, or given a command its subcommands, that `zklock help` lists
  "$@" 2>/dev/null | awk '/^Subcommands:/ { listing = 1; next } listing && /^  [a-z]/ { print $1 }'
}
_zklock() {
  local cur=${COMP_WORDS[COMP_CWORD]} zklock=${COMP_WORDS[0]} command= subcommand= words=() i
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ ${COMP_WORDS[i]} == -- ]]; then
      # run, elect: the words after -- are a command line of their own.
      COMPREPLY=($(compgen -c -- "$cur"))
      [[ $i -lt $((COMP_CWORD - 1)) ]] && COMPREPLY=($(compgen -f -- "$cur"))
      return
    fi
    [[ ${COMP_WORDS[i]} != -* ]] && words+=("${COMP_WORDS[i]}")
  done
  command=${words[0]-}
  local commands
  commands=$(_zklock_listed "$zklock" help)
  if [[ -z $command ]]; then
    COMPREPLY=($(compgen -W "$commands -h --help -V --version" -- "$cur"))
    return
  fi
  if [[ $command == help && $cur != -* ]]; then
    # zklock help COMMAND [SUBCOMMAND]
    case ${#words[@]} in
      1) COMPREPLY=($(compgen -W "$commands" -- "$cur")) ;;
      2) COMPREPLY=($(compgen -W "$(_zklock_listed "$zklock" help "${words[1]}")" -- "$cur")) ;;
    esac
    return
  fi
  local subcommands
  subcommands=$(_zklock_listed "$zklock" help "$command")
  if [[ -n $subcommands && ${#words[@]} -ge 2 ]] && grep -qx -- "${words[1]}" <<<"$subcommands"; then
    subcommand=${words[1]}
  fi
  if [[ -n $subcommands && -z $subcommand && $cur != -* ]]; then
    COMPREPLY=($(compgen -W "$subcommands" -- "$cur"))
    return
  fi
  if [[ $cur == -* ]]; then
    local options
    options=$("$zklock" help "$command" $subcommand 2>/dev/null | sed -n 's/^  \(-[^ ]*\).*/\1/p' | tr ',' ' ')
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
}
complete -F _zklock zklock
