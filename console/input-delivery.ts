import type { ConsoleConnection } from "./ahp-client.js";
import { InputOutbox, MAX_WAITING_INPUT_CHARS } from "./input-outbox.js";

/** What delivering input needs of the page: whether a terminal still takes input, and a place to say what went wrong. */
export interface InputDeliveryHost {
  takesInput(channel: string): boolean;
  say(text: string): void;
}

/**
 * Gets what is typed to its terminal, whatever happens to the connection: sent at once when it can be,
 * kept in the outbox while it cannot (and sent once it can), and sent again after a reconnect when it
 * was never echoed.
 */
export class InputDelivery {
  readonly outbox = new InputOutbox();

  constructor(
    private readonly client: ConsoleConnection,
    private readonly host: InputDeliveryHost,
  ) {}

  /** Sends input now, remembered until it is echoed. */
  send(channel: string, data: string, resentSeq?: number): void {
    const clientSeq = this.client.dispatch(channel, { type: "terminal/input", data }, resentSeq);
    this.outbox.sent({ channel, data, clientSeq });
  }

  /** Keeps input until `flush` (the terminal or the connection is not there yet). */
  keep(channel: string, data: string): void {
    this.outbox.add(channel, data);
  }

  /** The gateway echoed or refused this page's action `clientSeq`. */
  confirm(clientSeq: number): void {
    this.outbox.confirm(clientSeq);
  }

  /**
   * After a reconnect: input sent before the connection dropped and never echoed may have died with
   * the socket. A gateway that knew this page again gets it again, with its `clientSeq`: it writes what
   * it never got and only echoes again what it had. A restarted gateway cannot tell, so that input is
   * not repeated, and the notice says so.
   */
  resend(resumed: boolean): void {
    const unconfirmed = this.outbox.takeUnconfirmed();
    if (resumed) for (const { channel, data, clientSeq } of unconfirmed) this.send(channel, data, clientSeq);
    const chars = unconfirmed.reduce((sum, { data }) => sum + data.length, 0);
    if (!resumed && chars > 0) this.host.say(`${chars} characters typed just before the gateway restarted may not have reached the terminal`);
  }

  /** Sends, in order, what was kept, to the terminals that still take input; says what was not sent. */
  flush(): void {
    const dropped = this.outbox.droppedCount;
    let gone = 0;
    for (const { channel, data } of this.outbox.drain()) {
      if (this.host.takesInput(channel)) this.send(channel, data);
      else gone += data.length;
    }
    if (dropped > 0) this.host.say(`${dropped} characters typed while disconnected were not sent (at most ${MAX_WAITING_INPUT_CHARS} wait)`);
    if (gone > 0) this.host.say(`${gone} characters typed while disconnected were not sent: their terminal is gone`);
  }

  /** What the connection badge adds while disconnected: how much is waiting, and how much was not kept. */
  waitingText(): string {
    const { waitingCount, droppedCount } = this.outbox;
    const waiting = waitingCount ? ` — ${waitingCount} typed characters waiting` : "";
    return droppedCount ? `${waiting}; ${droppedCount} more not kept (at most ${MAX_WAITING_INPUT_CHARS} wait)` : waiting;
  }
}
