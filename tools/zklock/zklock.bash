# bash completion for zklock: commands, a command's subcommands (zklock fence
# check), and each one's options as its own `zklock help COMMAND [SUBCOMMAND]`
# lists them (asked of the zklock being completed, so the list is that
# binary's); after `--`, the command to run.
_zklock_listed() {  # from `zklock help [COMMAND]` on stdin: the commands, or the command's subcommands, it lists
  awk '/^Subcommands:/ { listing = 1; next } listing && /^  [a-z]/ { print $1 }'
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
  if [[ -z $command ]]; then
    COMPREPLY=($(compgen -W "$("$zklock" help 2>/dev/null | _zklock_listed) -h --help -V --version" -- "$cur"))
    return
  fi
  if [[ $command == help && $cur != -* ]]; then
    # zklock help COMMAND [SUBCOMMAND]
    case ${#words[@]} in
      1) COMPREPLY=($(compgen -W "$("$zklock" help 2>/dev/null | _zklock_listed)" -- "$cur")) ;;
      2) COMPREPLY=($(compgen -W "$("$zklock" help "${words[1]}" 2>/dev/null | _zklock_listed)" -- "$cur")) ;;
    esac
    return
  fi
  # The command's help, asked once: its subcommands, and its options unless a subcommand is given.
  local help subcommands
  help=$("$zklock" help "$command" 2>/dev/null)
  subcommands=$(_zklock_listed <<<"$help")
  if [[ -n $subcommands && ${#words[@]} -ge 2 ]] && grep -qx -- "${words[1]}" <<<"$subcommands"; then
    subcommand=${words[1]}
  fi
  if [[ -n $subcommands && -z $subcommand && $cur != -* ]]; then
    COMPREPLY=($(compgen -W "$subcommands" -- "$cur"))
    return
  fi
  if [[ $cur == -* ]]; then
    local options
    [[ -n $subcommand ]] && help=$("$zklock" help "$command" "$subcommand" 2>/dev/null)
    options=$(sed -n 's/^  \(-[^ ]*\).*/\1/p' <<<"$help" | tr ',' ' ')
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
}
complete -F _zklock zklock
