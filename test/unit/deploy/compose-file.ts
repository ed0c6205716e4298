import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { ROOT, scratchSecretFiles } from "./manifests.js";

/** deploy/compose.yaml, parsed (anchors and aliases resolved). */
export const compose = (): any => parse(readFileSync(join(ROOT, "deploy/compose.yaml"), "utf8"));

/** The compose services built from deploy/DOCKERFILE. */
export function servicesBuiltFrom(dockerfile: string): string[] {
  const { services } = compose();
  return Object.keys(services).filter((name) => services[name].build?.dockerfile === `deploy/${dockerfile}`);
}

/** The args with /run/secrets/NAME moved to a scratch file holding "NAME's value", for each of the compose file's secrets. */
export function withSecretFiles(args: string[]): string[] {
  const dir = scratchSecretFiles(Object.fromEntries(Object.keys(compose().secrets).map((name) => [name, `${name}'s value`])));
  return args.map((arg) => arg.replace(/^\/run\/secrets\//, `${dir}/`));
}
