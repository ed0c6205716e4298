import { parseArgs } from "node:util";
import { printable } from "../lib/unsafe-text.js";
import { attach } from "./attach.js";
import { targetFrom } from "./connection.js";
import { create, list, remove } from "./manage.js";
import { run } from "./run.js";

const USAGE = `Usage: ahp-term <command> [--url URL] [--token TOKEN] [--user-token SECRET]
  ls                              open terminals: URI, title, claim, state
  new [--cwd DIR] [--name NAME]   open a terminal; prints its URI
  attach NAME                     use a terminal from here (raw mode; detach with Ctrl-] d); NAME is
                                  its URI, its title, or a unique prefix of its URI
  run [--cwd DIR] -- CMD ARGS...  run a command in a terminal of its own; exits with its exit status (128+n after signal n)
  rm NAME                         end a terminal's process and remove it
  --version, --help               print the version, or this
The gateway: --url ws://HOST:PORT/?tkn=TOKEN, or AHP_URL; the connection token may also come from
--token or AHP_TOKEN, a user's secret (a gateway with a users file) from --user-token or AHP_USER_TOKEN.`;

/** Runs one command line and resolves with the exit status. */
async function main(argv: string[]): Promise<number> {
  const separator = argv.indexOf("--");
  const words = separator < 0 ? argv : argv.slice(0, separator);
  const command = separator < 0 ? [] : argv.slice(separator + 1);
  const { values, positionals } = parseArgs({
    args: words,
    allowPositionals: true,
    strict: true,
    options: {
      url: { type: "string" },
      token: { type: "string" },
      "user-token": { type: "string" },
      cwd: { type: "string" },
      name: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const [verb, ...rest] = positionals;
  if (values.help || !verb) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const target = targetFrom(values, process.env);
  const out = (text: string): void => void process.stdout.write(text);
  switch (verb) {
    case "ls":
      return list(target, out);
    case "new":
      return create(target, values, out);
    case "rm":
      if (rest.length !== 1) throw new UsageError("rm needs one terminal (URI, title or URI prefix)");
      return remove(target, rest[0]!);
    case "attach":
      if (rest.length !== 1) throw new UsageError("attach needs one terminal (URI, title or URI prefix)");
      return attach(target, rest[0]!, process);
    case "run":
      if (command.length === 0) throw new UsageError("run needs a command after --");
      return run(target, values, command, process);
    default:
      throw new UsageError(`unknown command "${verb}"`);
  }
}

class UsageError extends Error {}

main(process.argv.slice(2)).then(
  (status) => process.exit(status),
  (err: unknown) => {
    const usage = err instanceof UsageError || (err as NodeJS.ErrnoException).code?.startsWith("ERR_PARSE_ARGS");
    process.stderr.write(`ahp-term: ${printable(err instanceof Error ? err.message : String(err))}\n${usage ? `${USAGE}\n` : ""}`);
    process.exit(usage ? 2 : 1);
  },
);
