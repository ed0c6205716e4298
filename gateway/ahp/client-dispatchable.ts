/** Action types a client may dispatch (the protocol's IS_CLIENT_DISPATCHABLE); every other type is the server's alone. */
export const CLIENT_DISPATCHABLE = new Set([
  "terminal/input",
  "terminal/resized",
  "terminal/claimed",
  "terminal/titleChanged",
  "terminal/cleared",
  "root/configChanged",
]);
