/** Ctrl-], the first key of the detach sequence (Ctrl-] d), as telnet uses it. */
const DETACH_PREFIX = 0x1d;
const DETACH_KEY = 0x64;

/**
 * Reads raw key bytes: passes them on as text (a character split across reads is joined) and
 * watches for the detach sequence, Ctrl-] d (Ctrl-] followed by any other key sends both on).
 */
export class KeyReader {
  private readonly decoder = new TextDecoder("utf-8");
  private pendingPrefix = false;
  /** True once the detach sequence was typed. */
  detached = false;

  constructor(
    private readonly send: (text: string) => void,
    private readonly onDetach: () => void,
  ) {}

  /** Takes one read of the keyboard (a `data` listener). */
  readonly read = (chunk: Buffer): void => {
    if (this.detached) return;
    const keys: number[] = [];
    for (const byte of chunk) {
      if (this.pendingPrefix) {
        this.pendingPrefix = false;
        if (byte === DETACH_KEY) {
          this.detached = true;
          break;
        }
        keys.push(DETACH_PREFIX);
      }
      if (byte === DETACH_PREFIX) this.pendingPrefix = true;
      else keys.push(byte);
    }
    // Keys typed before the detach in the same read still go to the terminal.
    const text = this.decoder.decode(Buffer.from(keys), { stream: true });
    if (text) this.send(text);
    if (this.detached) this.onDetach();
  };
}
