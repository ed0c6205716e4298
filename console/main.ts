import { contentText } from "../ahp/content-text.js";
import { rootReducer } from "../ahp/root-reducer.js";
import { terminalReducer } from "../ahp/terminal-reducer.js";
import type { ActionEnvelope, RootState, TerminalState } from "../ahp/types.js";
import { AUTH_REQUIRED, ConsoleConnection, RpcError, type Snapshot } from "./ahp-client.js";
import { ClientNames } from "./client-names.js";
import { InputDelivery } from "./input-delivery.js";
import { isRunning, renderHeader as renderTerminalHeader } from "./terminal-header.js";
import { lifecycleText, TerminalList } from "./terminal-list.js";
import { TerminalView, type CellSize } from "./terminal-view.js";

const ROOT = "ahp-root://";
/** How long the window must stay one size before the terminal is resized to it. */
const RESIZE_SETTLE_MS = 80;

const byId = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;
const connectionBadge = byId("connection");
const notice = byId("notice");
const header = byId("terminal-header");
const screen = byId("screen");
const placeholder = byId("placeholder");

/**
 * The terminal on screen: its URI and, once subscribed, its state, the sequence number its snapshot
 * stands at, whether any output has come yet (a shell still starting shows nothing), and the runner
 * offset where the output it shows ends (unknown after output that came without one).
 */
let current: { uri: string; state?: TerminalState; fromSeq: number; hadOutput: boolean; offset?: number } | undefined;
let root: RootState = { agents: [], terminals: [] };
let connectedOnce = false;
/** Why the connection is down, while it is. */
let offlineReason: string | undefined;

const token = new URLSearchParams(location.search).get("tkn");
const client = new ConsoleConnection(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/?tkn=${encodeURIComponent(token ?? "")}`, {
  ready(snapshots, lost) {
    offlineReason = undefined;
    names.retryUnnamed();
    renderConnection();
    for (const snapshot of snapshots) {
      if (snapshot.resource === ROOT) root = snapshot.state;
      else if (current?.uri === snapshot.resource) show(snapshot);
    }
    renderList();
    if (current && lost.includes(current.uri)) leave(`${current.uri} is gone`);
    if (!connectedOnce) {
      connectedOnce = true;
      const wanted = decodeURIComponent(location.hash.slice(1));
      if (wanted) void open(wanted);
    }
  },
  settled(resumed) {
    input.resend(resumed);
    input.flush();
  },
  action: apply,
  offline(reason) {
    offlineReason = reason;
    renderConnection();
  },
  shownOffsets() {
    return current?.state && current.offset !== undefined ? { [current.uri]: current.offset } : {};
  },
});
/** What is typed, delivered whatever happens to the connection. */
const input = new InputDelivery(client, {
  takesInput: (channel) => root.terminals?.some((terminal) => terminal.resource === channel && lifecycleText(terminal) === "running") ?? false,
  say,
});
const find = byId<HTMLInputElement>("find");
const view = new TerminalView(screen, {
  input(data) {
    if (!current || (current.state && !isRunning(current.state))) return;
    // Typed before the terminal's state arrived (it is being created or opened) or while disconnected: it waits.
    if (!client.online || !current.state) {
      input.keep(current.uri, data);
      return renderConnection();
    }
    // The page someone types in takes the terminal to its own size (the last one used decides, as with tmux).
    fitToWindow();
    input.send(current.uri, data);
  },
  findResult({ index, count }) {
    byId("find-count").textContent = count === 0 ? "no match" : index < 0 ? `${count}+ matches` : `${index + 1} of ${count}`;
  },
  findRequested() {
    find.focus();
    find.select();
  },
});
// The terminal on screen, for automation (browser tests read its buffer) and the curious: `consoleTerminal` in the devtools.
Object.assign(window, { consoleTerminal: view.term });
/** Who holds the listed terminals, as the gateway names them; the list and header are drawn again when names arrive. */
const names = new ClientNames(client, () => {
  renderList();
  renderHeader();
});
const list = new TerminalList(byId<HTMLUListElement>("terminal-list"), client.clientId, names, (uri) => void open(uri));

function apply(envelope: ActionEnvelope): void {
  if (envelope.origin?.clientId === client.clientId) input.confirm(envelope.origin.clientSeq);
  if (envelope.rejectionReason !== undefined) {
    if (envelope.origin?.clientId === client.clientId) say(`${envelope.action.type} refused: ${envelope.rejectionReason}`);
    return;
  }
  if (envelope.channel === ROOT) {
    root = rootReducer(root, envelope.action);
    renderList();
    if (current?.state && !root.terminals?.some((terminal) => terminal.resource === current?.uri)) leave(`${current.uri} was closed`);
    return;
  }
  if (!current?.state || envelope.channel !== current.uri || envelope.serverSeq <= current.fromSeq) return;
  current.state = terminalReducer(current.state, envelope.action);
  const { action } = envelope;
  if (action.type === "terminal/data") {
    view.write(action.data);
    current.hadOutput = true;
    const offset = envelope._meta?.offset;
    current.offset = typeof offset === "number" ? offset : undefined;
  }
  else if (action.type === "terminal/cleared") view.clear();
  else if (action.type === "terminal/commandExecuted") view.commandStarted(action.commandId, action.commandLine);
  else if (action.type === "terminal/commandFinished") view.commandFinished(action.commandId, action.exitCode);
  else if (action.type === "terminal/resized") view.resize({ cols: action.cols, rows: action.rows });
  renderHeader();
}

/** Puts a terminal on screen (subscribing to it) and remembers it in the address, so a reload or a second tab opens it too. */
async function open(uri: string): Promise<void> {
  if (current?.uri === uri) return view.focus();
  select(uri);
  await attach(uri);
}

/**
 * Makes `uri` the terminal on screen before its state arrives: a blank screen that takes the keyboard at
 * once (it was opened on purpose: created, picked, or named in the address), what is typed waiting in the
 * outbox until the terminal can take it.
 */
function select(uri: string): void {
  if (current) client.unwatch(current.uri);
  current = { uri, fromSeq: Number.POSITIVE_INFINITY, hadOutput: false };
  history.replaceState(null, "", `${location.pathname}${location.search}#${encodeURIComponent(uri)}`);
  renderList();
  header.hidden = true;
  placeholder.hidden = true;
  screen.style.visibility = "visible";
  view.show([], {});
  // At once, so the next key typed lands here (the list the focus was in has just been redrawn); the
  // Enter that picked a row cannot follow, its keydown's default being prevented. Once more after the
  // event that chose it, in case its handling moved the focus afterwards.
  view.focus();
  setTimeout(() => view.focus());
}

/** Subscribes to the terminal on screen and shows it, then sends what was typed into it meanwhile. */
async function attach(uri: string): Promise<void> {
  try {
    const snapshot = await signedIn(() => client.watch(uri));
    if (current?.uri !== uri) return;
    show(snapshot);
    fitToWindow();
    input.flush();
  } catch (err) {
    if (current?.uri === uri) leave(`cannot open ${uri}: ${(err as Error).message}`);
  }
}

/**
 * Shows a terminal from its snapshot: what it missed appended to what is shown, when the gateway
 * could read it from where the page stands (and the size is the one shown); else the screen the
 * gateway rendered, else (a gateway without screens, retention past the start) its whole content.
 */
function show(snapshot: Snapshot): void {
  if (!current) return;
  const state: TerminalState = snapshot.state;
  const resume = snapshot._meta?.resume;
  const goesOn = current.state !== undefined && resume?.from === current.offset && state.cols === view.term.cols && state.rows === view.term.rows;
  current.state = state;
  current.fromSeq = snapshot.fromSeq;
  current.offset = snapshot._meta?.offset;
  current.hadOutput ||= contentText(state) !== "";
  header.hidden = false;
  placeholder.hidden = true;
  screen.style.visibility = "visible";
  const rendered = snapshot._meta?.screen;
  if (goesOn) view.write(resume!.data);
  else if (rendered) view.restore(rendered, state.content);
  else view.show(state.content, state);
  renderHeader();
}

function leave(reason: string): void {
  current = undefined;
  byId("starting").hidden = true;
  history.replaceState(null, "", `${location.pathname}${location.search}`);
  header.hidden = true;
  placeholder.hidden = false;
  screen.style.visibility = "hidden";
  renderList();
  say(reason);
}

function renderList(): void {
  list.render(root.terminals ?? [], current?.uri);
}

function renderHeader(): void {
  if (current?.state) renderTerminalHeader(document, { uri: current.uri, state: current.state, hadOutput: current.hadOutput }, client.clientId, (clientId) => names.nameOf(clientId));
}

/** Asks for the size that fills the window; the terminal (and every page on it) takes it when the gateway confirms. */
function fitToWindow(): void {
  const state = current?.state;
  const size = view.fittingSize();
  if (!client.online || !current || !state || !size || !isRunning(state) || (size.cols === state.cols && size.rows === state.rows)) return;
  client.dispatch(current.uri, { type: "terminal/resized", ...size });
}

async function createTerminal(): Promise<void> {
  const uri = `ahp-terminal:/${crypto.randomUUID()}`;
  const size: CellSize = view.fittingSize() ?? { cols: 80, rows: 24 };
  const previous = current?.uri;
  select(uri);
  try {
    await signedIn(() => client.call("createTerminal", { channel: uri, ...size }));
  } catch (err) {
    if (current?.uri !== uri) return;
    leave(`cannot open a terminal: ${(err as Error).message}`);
    if (previous) void open(previous);
    return;
  }
  if (current?.uri === uri) await attach(uri);
}

/** Runs a request; if the gateway wants a signed-in user, asks for a user token, signs in and runs it again. */
async function signedIn<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (err) {
    const resource: unknown = err instanceof RpcError && err.code === AUTH_REQUIRED ? (err.data as { resources?: Array<{ resource?: unknown }> } | undefined)?.resources?.[0]?.resource : undefined;
    if (typeof resource !== "string") throw err;
    const userToken = prompt(`This gateway needs a user token (${resource}). Paste yours:`);
    if (!userToken) throw err;
    await client.signIn(resource, userToken);
    return request();
  }
}

function renderConnection(): void {
  if (offlineReason === undefined) return setConnection("online", "connected");
  setConnection("offline", `${offlineReason}; reconnecting…${input.waitingText()}`);
}

function setConnection(kind: "online" | "offline", text: string): void {
  connectionBadge.className = `connection ${kind}`;
  connectionBadge.textContent = text;
}

function say(text: string): void {
  notice.textContent = text;
}

const newTerminal = byId<HTMLButtonElement>("new-terminal");
newTerminal.onclick = () => {
  // The button lets go of the focus at once (a Space or Enter meant for the new terminal must not make another),
  // and the terminal takes it when it is shown.
  newTerminal.blur();
  newTerminal.disabled = true;
  void createTerminal().finally(() => (newTerminal.disabled = false));
};
find.onkeydown = (event) => {
  if (event.key === "Escape") {
    // Back to the terminal, highlights gone.
    event.preventDefault();
    view.find("");
    byId("find-count").textContent = "";
    return view.focus();
  }
  if (event.key !== "Enter") return;
  event.preventDefault();
  view.find(find.value, event.shiftKey);
};
find.oninput = () => {
  byId("find-count").textContent = "";
  if (!find.value) view.find("");
};
byId("rename").onclick = () => {
  if (!current?.state) return;
  const title = prompt("Terminal title", current.state.title);
  if (title !== null) client.dispatch(current.uri, { type: "terminal/titleChanged", title });
};
byId("clear").onclick = () => {
  if (current?.state) client.dispatch(current.uri, { type: "terminal/cleared" });
};
byId("close").onclick = () => {
  if (!current?.state) return;
  if (isRunning(current.state) && !confirm("Close this terminal? Its process will be ended.")) return;
  const uri = current.uri;
  signedIn(() => client.call("disposeTerminal", { channel: uri })).catch((err: Error) => say(`cannot close: ${err.message}`));
};
let settle: ReturnType<typeof setTimeout> | undefined;
new ResizeObserver(() => {
  clearTimeout(settle);
  settle = setTimeout(fitToWindow, RESIZE_SETTLE_MS);
}).observe(screen);
// A page brought back to the front takes the terminal to its size again.
window.addEventListener("focus", fitToWindow);
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible") fitToWindow();
});

screen.style.visibility = "hidden";
if (token) client.start();
else setConnection("offline", "no token: open the address the gateway printed (it ends in ?tkn=…)");
