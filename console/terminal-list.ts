import type { TerminalClaim, TerminalInfo, TerminalLifecycle } from "../ahp/types.js";
import { printable } from "../lib/unsafe-text.js";
import { CONSOLE_CLIENT_NAME, CONSOLE_CLIENT_PREFIX } from "./ahp-client.js";
import type { HolderName } from "./client-names.js";

/** What the gateway has said of a client's name, by its id (undefined: nothing yet). */
export type NameOf = (clientId: string) => HolderName | undefined;

/** What the list and the header need to say about a terminal (a root entry or a terminal's own state). */
export interface TerminalSummary {
  title: string;
  claim: TerminalClaim;
  exitCode?: number;
  lifecycle?: TerminalLifecycle;
}

/** "running", or "exited with code N" (any protocol version's way of saying it). */
export function lifecycleText(terminal: TerminalSummary): string {
  const exited = terminal.lifecycle?.status === "exited" || terminal.exitCode !== undefined;
  if (!exited) return "running";
  const code = terminal.lifecycle?.status === "exited" ? terminal.lifecycle.exitCode : terminal.exitCode;
  return code === undefined ? "exited" : `exited with code ${code}`;
}

/** Who holds the terminal, in words: by the name the gateway knows (`alice (VS Code)`, `VS Code`, `alice`), else by its client id; `ownClientId` is this page's. */
export function claimText(claim: TerminalClaim, ownClientId: string, nameOf: NameOf = () => undefined): string {
  if (claim.kind === "session") return `session ${claim.session}${claim.turnId ? ` (turn ${claim.turnId})` : ""}`;
  if (claim.clientId === ownClientId) return "this page";
  const named = holderText(nameOf(claim.clientId));
  if (named) return named;
  // A console page's client id is a random one, not worth showing.
  return claim.clientId.startsWith(CONSOLE_CLIENT_PREFIX) ? "another console page" : `client ${claim.clientId}`;
}

/** The ids of the clients holding claims on these terminals, other than this page. */
export function claimHolders(terminals: readonly { claim: TerminalClaim }[], ownClientId: string): string[] {
  return terminals.flatMap(({ claim }) => (claim.kind === "client" && claim.clientId !== ownClientId ? [claim.clientId] : []));
}

/** A holder's name in words; a console page's own client name says less than "console page", so it is put that way. */
function holderText(name: HolderName | undefined): string | undefined {
  const client = name?.client === CONSOLE_CLIENT_NAME ? "console page" : name?.client;
  if (name?.user) return client ? `${name.user} (${client})` : name.user;
  return name?.client === CONSOLE_CLIENT_NAME ? undefined : client;
}

/** The sidebar list of every terminal the gateway has; picking one calls `onPick` with its URI. */
export class TerminalList {
  constructor(
    private readonly element: HTMLUListElement,
    private readonly ownClientId: string,
    private readonly names: { nameOf: NameOf; want(clientIds: Iterable<string>): void },
    private readonly onPick: (uri: string) => void,
  ) {}

  /** Shows the terminals, marking the one on screen. Titles are set as text, never as markup, with controls and bidirectional characters spelled out. */
  render(terminals: readonly TerminalInfo[], active: string | undefined): void {
    // Holders the gateway was not asked about yet are named in a later render, once it answered.
    this.names.want(claimHolders(terminals, this.ownClientId));
    const nameOf: NameOf = (clientId) => this.names.nameOf(clientId);
    const items = terminals.map((terminal) => {
      const item = document.createElement("li");
      item.dataset.uri = terminal.resource;
      item.tabIndex = 0;
      const running = lifecycleText(terminal) === "running";
      item.className = [terminal.resource === active ? "active" : "", running ? "" : "exited"].join(" ").trim();
      const title = document.createElement("span");
      title.className = "title";
      title.textContent = printable(terminal.title || terminal.resource);
      const meta = document.createElement("span");
      meta.className = "meta";
      meta.textContent = printable(`${lifecycleText(terminal)} · ${claimText(terminal.claim, this.ownClientId, nameOf)}`);
      item.append(title, meta);
      // The row cuts long titles and claims short; the tooltip has them whole.
      item.title = `${title.textContent}\n${meta.textContent}\n${printable(terminal.resource)}`;
      item.onclick = () => this.onPick(terminal.resource);
      item.onkeydown = (event) => {
        if (event.key !== "Enter") return;
        // The terminal takes the focus at once: without this the same Enter would reach it too.
        event.preventDefault();
        this.onPick(terminal.resource);
      };
      return item;
    });
    this.element.replaceChildren(...items);
  }
}
