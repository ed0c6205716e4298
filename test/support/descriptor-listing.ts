/**
 * A sh line a terminal runs to show what its processes hold: the descriptors of the shell itself
 * (listed by ls, a child, so the listing opens nothing in the shell) and those of a child it starts
 * (ls listing itself, where the directory it reads shows as one more), each with its target; then a
 * pause, so a pty delivers the tail before the exit.
 */
export const DESCRIPTOR_PROBE = "echo SHELL-FDS; ls -l /proc/$$/fd; echo CHILD-FDS; ls -l /proc/self/fd; echo END-FDS; sleep 0.1";

/** Descriptor number → target, for the shell and for its child. */
export interface DescriptorListing {
  shell: Map<number, string>;
  child: Map<number, string>;
}

/** Reads what DESCRIPTOR_PROBE printed. */
export function parseDescriptorListing(output: string): DescriptorListing {
  const text = output.replace(/\r/g, "");
  const section = (from: string, to: string): Map<number, string> => {
    const body = text.slice(text.indexOf(`${from}\n`), text.indexOf(`${to}\n`));
    return new Map([...body.matchAll(/ (\d+) -> (.*)$/gm)].map(([, fd, target]) => [Number(fd), target!]));
  };
  if (!text.includes("END-FDS\n")) throw new Error(`the descriptor listing is incomplete: ${JSON.stringify(text.slice(-300))}`);
  return { shell: section("SHELL-FDS", "CHILD-FDS"), child: section("CHILD-FDS", "END-FDS") };
}

/**
 * Every descriptor in a listing beyond standard input, output and error, except the directory the
 * child's own listing reads: what a terminal's processes hold that is not theirs ([] when clean).
 */
export function strayDescriptors({ shell, child }: DescriptorListing): string[] {
  const stray = (who: string, fds: Map<number, string>, own?: RegExp): string[] =>
    [...fds].filter(([fd, target]) => fd > 2 && !own?.test(target)).map(([fd, target]) => `${who} ${fd} -> ${target}`);
  return [...stray("shell", shell), ...stray("child", child, /^\/proc\/\d+\/fd$/)];
}
