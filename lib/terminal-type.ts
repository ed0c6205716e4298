/** A terminal type (TERM) as terminals report it: a terminfo name of letters, digits and `.+-_`, so it can never name a path elsewhere. */
export const TERMINAL_TYPE = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;

/** What a terminal type must look like, for error messages. */
export const TERMINAL_TYPE_RULE = 'a terminfo name (at most 64 letters, digits and ".+-_")';
