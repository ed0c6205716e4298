# Shell integration the terminal runner injects into interactive zsh: read the user's own .zshrc,
# then report prompts, command starts, exit codes and the working directory with OSC 133 and OSC 7.
ZDOTDIR="$AHP_USER_ZDOTDIR"
unset AHP_USER_ZDOTDIR
if [[ -r "$ZDOTDIR/.zshrc" ]]; then . "$ZDOTDIR/.zshrc"; fi

typeset -g __ahp_executing=

__ahp_precmd() {
  local ahp_status=$?
  if [[ -n "$__ahp_executing" ]]; then
    builtin printf '\e]133;D;%s\a' "$ahp_status"
    __ahp_executing=
  fi
  builtin printf '\e]7;file://%s%s\a' "${HOST-}" "${${${PWD//\%/%25}// /%20}//\#/%23}"
  if [[ "$PS1" != *'133;B'* ]]; then
    PS1=$'%{\e]133;A\a%}'"$PS1"$'%{\e]133;B\a%}'
  fi
  return $ahp_status
}

__ahp_preexec() {
  __ahp_executing=1
  builtin printf '\e]133;C\a'
}

precmd_functions=(__ahp_precmd $precmd_functions)
preexec_functions+=(__ahp_preexec)
