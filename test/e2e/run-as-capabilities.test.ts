import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { eventually } from "../support/eventually.js";
import { ACCOUNTS_SKIP_REASON, CAN_SWITCH_ACCOUNTS, createAccount, removeAccount, type TestAccount } from "../integration/runner/test-accounts.js";
import { ROOT, startRunnerProcess, type RunnerProcess } from "./runner-process.js";

if (ACCOUNTS_SKIP_REASON) console.warn(ACCOUNTS_SKIP_REASON);

const TOKEN = "capabilities-test-token";
/** The run-as runner's container as the Kubernetes manifest gives it. */
const container = parse(readFileSync(join(ROOT, "deploy/kubernetes/runner/run-as.yaml"), "utf8")).spec.template.spec.containers[0];
const capabilities: string[] = container.securityContext.capabilities.add;

/**
 * Runs the runner as the manifest's container would: root whose capabilities are only those the manifest
 * adds (the bounding set caps what an exec as root gets), and no_new_privs when privilege escalation is off.
 */
const launcher = [
  "/usr/bin/setpriv",
  ...(container.securityContext.allowPrivilegeEscalation === false ? ["--no-new-privs"] : []),
  `--bounding-set=-all,${capabilities.map((name) => `+${name.toLowerCase()}`).join(",")}`,
];

const bitsSet = (hex: string): number => [...BigInt(`0x${hex}`).toString(2)].filter((bit) => bit === "1").length;

describe.skipIf(!CAN_SWITCH_ACCOUNTS)("a run-as runner with only the capabilities its Kubernetes manifest adds", () => {
  let account: TestAccount;
  let project: string;
  let runner: RunnerProcess;
  beforeAll(async () => {
    account = createAccount(`ahpc${`${process.pid}`.slice(-5)}`, "/bin/sh");
    // A private home, as Debian makes them: the runner checks the cwd inside it with the account's permissions.
    chmodSync(account.home, 0o700);
    project = join(account.home, "project");
    mkdirSync(project, { mode: 0o700 });
    chownSync(project, account.uid, account.gid);
    runner = await startRunnerProcess(["--port", "0", "--allow-run-as", "--token", TOKEN], {}, { launcher });
  });
  afterAll(async () => {
    await runner?.stop();
    removeAccount(account);
  });

  it("holds those capabilities and no others", () => {
    const status = readFileSync(`/proc/${runner.child.pid}/status`, "utf8");
    const field = (name: string) => new RegExp(`^${name}:\\s*([0-9a-f]+)$`, "m").exec(status)![1]!;
    expect(bitsSet(field("CapEff"))).toBe(capabilities.length);
    expect(field("CapEff")).toBe(field("CapBnd"));
  });

  it("starts a pty terminal as the account in a directory of its private home, and ends it on close", async () => {
    const client = runner.client(TOKEN);
    const { terminal } = await client.spawn({ argv: ["/bin/sh", "-c", 'echo "uid=$(id -u) pwd=$(pwd) tty=$(tty)"; exec sleep 60'], runAs: account.name, cwd: project });
    let output = "";
    for await (const event of client.attach({ id: terminal!.id, follow: true })) {
      if (event.event.case === "output") output += Buffer.from(event.event.value.data).toString();
      if (/tty=\S+/.test(output) || event.event.case === "exited") break;
    }
    expect(output).toContain(`uid=${account.uid} pwd=${project} tty=/dev/pts/`);
    await client.close({ id: terminal!.id });
    expect(await eventually(() => !existsSync(`/proc/${terminal!.pid}`))).toBe(true);
  });
});
