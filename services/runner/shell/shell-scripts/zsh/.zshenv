# Shell integration the terminal runner injects into interactive zsh (through ZDOTDIR): read the
# user's own .zshenv from their directory, then come back here for .zshrc.
__ahp_zdotdir="$ZDOTDIR"
ZDOTDIR="${AHP_USER_ZDOTDIR:-$HOME}"
if [[ -r "$ZDOTDIR/.zshenv" ]]; then . "$ZDOTDIR/.zshenv"; fi
AHP_USER_ZDOTDIR="$ZDOTDIR"
ZDOTDIR="$__ahp_zdotdir"
unset __ahp_zdotdir
