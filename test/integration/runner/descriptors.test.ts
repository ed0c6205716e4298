import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TerminalMode } from "../../../gen/terminal/v1/terminal_pb.js";
import { DESCRIPTOR_PROBE, parseDescriptorListing, strayDescriptors } from "../../support/descriptor-listing.js";
import { QUIET_SHELL_ENV, runToExit, useTestRunner, waitForOutput, type TestRunner } from "./harness.js";
import { ACCOUNTS_SKIP_REASON, CAN_SWITCH_ACCOUNTS, createAccount, removeAccount, type TestAccount } from "./test-accounts.js";

if (ACCOUNTS_SKIP_REASON) console.warn(ACCOUNTS_SKIP_REASON);

/** Terminals opened before the one that looks: each would have left it a descriptor, were any leaked. */
const EARLIER_TERMINALS = 10;
const MODES = [TerminalMode.PTY, TerminalMode.PIPES] as const;
const modeName = (mode: TerminalMode): string => (mode === TerminalMode.PTY ? "pty" : "pipes");

const suffix = `${process.pid}`.slice(-5);
let runner: TestRunner;
let ana: TestAccount | undefined;
let ben: TestAccount | undefined;

/** Runs DESCRIPTOR_PROBE in a new terminal and returns what it found beyond 0, 1 and 2, after checking those are there. */
async function strayIn(mode: TerminalMode, runAs = ""): Promise<string[]> {
  const { terminal } = await runner.grpc.spawn({ argv: ["/bin/sh", "-c", DESCRIPTOR_PROBE], mode, runAs });
  const listing = parseDescriptorListing((await runToExit(runner.grpc, terminal!.id)).output.toString());
  for (const fds of [listing.shell, listing.child]) expect([0, 1, 2].every((fd) => fds.has(fd))).toBe(true);
  return strayDescriptors(listing);
}

describe("the descriptors of a terminal's processes", () => {
  beforeAll(() => {
    if (CAN_SWITCH_ACCOUNTS) {
      ana = createAccount(`ahpd${suffix}a`, "/bin/sh");
      ben = createAccount(`ahpd${suffix}b`, "/bin/sh");
    }
  });
  // Registered before the runner, so it runs after the runner has closed.
  afterAll(() => {
    removeAccount(ana);
    removeAccount(ben);
  });
  runner = useTestRunner({ env: { ...process.env, ...QUIET_SHELL_ENV }, runAs: { allowed: CAN_SWITCH_ACCOUNTS, allowRoot: false } });
  beforeAll(async () => {
    // Shells waiting for input, alternately under a pty and on pipes, as the runner's account and (as root) two others.
    const accounts = ["", ana?.name ?? "", ben?.name ?? ""];
    for (let i = 0; i < EARLIER_TERMINALS; i++) {
      await runner.grpc.spawn({ argv: ["/bin/sh"], mode: MODES[i % 2], runAs: accounts[i % 3] });
    }
  });

  for (const mode of MODES) {
    it(`are only its own standard input, output and error, ${modeName(mode)}, after ten other terminals`, async () => {
      expect(await strayIn(mode)).toEqual([]);
    });

    it.skipIf(!CAN_SWITCH_ACCOUNTS)(`are only its own as another account too, ${modeName(mode)}`, async () => {
      expect(await strayIn(mode, ana!.name)).toEqual([]);
    });
  }

  it.skipIf(!CAN_SWITCH_ACCOUNTS)("give one account's terminal no way to type into another account's", async () => {
    const { terminal: victim } = await runner.grpc.spawn({ argv: ["/bin/sh"], mode: TerminalMode.PTY, runAs: ana!.name });
    await runner.grpc.write({ id: victim!.id, data: Buffer.from("tty\r") });
    const tty = /\/dev\/pts\/\d+/.exec(await waitForOutput(runner.grpc, victim!.id, /\/dev\/pts\/\d+\r\n/))![0];
    // Ben's shell types a command into every terminal whose master it holds, and writes to the victim's terminal by name.
    const attack = [
      "for fd in /proc/self/fd/*; do n=${fd##*/}; [ \"$n\" -gt 2 ] || continue",
      '  case "$(readlink "$fd")" in /dev/ptmx|/dev/pts/*) printf "echo PWNED-\\$((6*7))\\r" >&"$n" && echo "reached $n";; esac',
      "done",
      `printf 'echo PWNED-$((6*7))\\n' > ${tty} && echo "reached ${tty}"`,
      "echo attack-done",
    ].join("\n");
    const attempts: string[] = [];
    for (const mode of MODES) {
      const { terminal } = await runner.grpc.spawn({ argv: ["/bin/bash", "-c", attack], mode, runAs: ben!.name });
      attempts.push((await runToExit(runner.grpc, terminal!.id)).output.toString());
    }
    // Whatever reached the victim's input was read before this line.
    await runner.grpc.write({ id: victim!.id, data: Buffer.from("echo own-$((1+1))\r") });
    expect(await waitForOutput(runner.grpc, victim!.id, /own-2\r\n/)).not.toContain("PWNED-42");
    for (const output of attempts) {
      expect(output).toContain("attack-done");
      expect(output).not.toContain("reached");
    }
    // The victim's own account can still type into it by name, so the refusal above is not a broken tty.
    execFileSync("setpriv", [`--reuid=${ana!.uid}`, `--regid=${ana!.gid}`, "--init-groups", "sh", "-c", `printf 'by-name\\n' > ${tty}`]);
    await waitForOutput(runner.grpc, victim!.id, /by-name/);
  });
});
