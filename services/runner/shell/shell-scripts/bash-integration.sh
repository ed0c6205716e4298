# Shell integration the terminal runner injects into interactive bash (started with --rcfile).
# It reads what an interactive bash would read, then reports prompts, command starts, exit codes and
# the working directory with OSC 133 and OSC 7. The user's prompt, aliases and $? are left as they were.

if [ -n "${__AHP_INTEGRATION-}" ]; then return 0; fi
__AHP_INTEGRATION=1

if [ -r /etc/bash.bashrc ]; then . /etc/bash.bashrc; fi
if [ -r "$HOME/.bashrc" ]; then . "$HOME/.bashrc"; fi

__ahp_status=0
__ahp_executing=
__ahp_at_prompt=

__ahp_report_cwd() {
  local path="${PWD//%/%25}"
  path="${path// /%20}"
  path="${path//#/%23}"
  path="${path//\?/%3F}"
  path="${path//$'\n'/%0A}"
  path="${path//$'\a'/%07}"
  path="${path//$'\e'/%1B}"
  builtin printf '\e]7;file://%s%s\a' "${HOSTNAME-}" "$path"
}

# First in PROMPT_COMMAND: the status of the command that just ended is still in $?.
__ahp_precmd() {
  __ahp_status=$?
  if [ -n "$__ahp_executing" ]; then
    builtin printf '\e]133;D;%s\a' "$__ahp_status"
    __ahp_executing=
  fi
  __ahp_report_cwd
  return "$__ahp_status"
}

# Last in PROMPT_COMMAND: mark the prompt (again, if the user's PROMPT_COMMAND rebuilt PS1) and hand $? back.
__ahp_prompt_ready() {
  case "$PS1" in
    *'133;B'*) ;;
    *) PS1='\[\e]133;A\a\]'"$PS1"'\[\e]133;B\a\]' ;;
  esac
  __ahp_at_prompt=1
  return "$__ahp_status"
}

# The DEBUG trap runs before every simple command; the first one after a prompt is the user's command line.
__ahp_preexec() {
  [ -n "$__ahp_at_prompt" ] || return 0
  [ -z "${COMP_LINE-}" ] || return 0
  case "$BASH_COMMAND" in __ahp_*) return 0 ;; esac
  __ahp_at_prompt=
  __ahp_executing=1
  builtin printf '\e]133;C\a'
}

# Wrap the user's PROMPT_COMMAND, either form: an array (bash 5.1+) gains two elements; a string loses
# the semicolons and blanks at its ends (hooks such as pyenv's leave "hook;"), which would make ";;".
# ${var@a} (bash 4.4+) reads the attributes without forking a subshell: every spawn pays for a fork.
if (( BASH_VERSINFO[0] * 100 + BASH_VERSINFO[1] >= 404 )) && [[ -v PROMPT_COMMAND && ${PROMPT_COMMAND@a} == *a* ]]; then
  PROMPT_COMMAND=(__ahp_precmd "${PROMPT_COMMAND[@]}" __ahp_prompt_ready)
else
  __ahp_user_command=${PROMPT_COMMAND-}
  __ahp_user_command=${__ahp_user_command#"${__ahp_user_command%%[![:space:];]*}"}
  __ahp_user_command=${__ahp_user_command%"${__ahp_user_command##*[![:space:];]}"}
  PROMPT_COMMAND="__ahp_precmd${__ahp_user_command:+; $__ahp_user_command}; __ahp_prompt_ready"
  unset __ahp_user_command
fi
trap '__ahp_preexec' DEBUG
