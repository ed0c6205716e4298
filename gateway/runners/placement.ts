import { createHash } from "node:crypto";
import type { Runner } from "./runner-client.js";

/**
 * The runners in the order a terminal at `uri` is placed on them (rendezvous hashing): each runner's
 * weight is a hash of its URL and the URI, highest first. Every gateway that sees the same runners
 * ranks them alike without talking to the others, so two gateways creating the same URI at once try
 * the same runner first, where its unique URI label lets exactly one of them have it; a runner added
 * or removed moves only the URIs it ranks first.
 */
export function placementOrder(uri: string, runners: readonly Runner[]): Runner[] {
  return runners
    .map((runner) => ({ runner, weight: createHash("sha256").update(runner.url).update("\n").update(uri).digest().readBigUInt64BE() }))
    .sort((a, b) => (a.weight === b.weight ? a.runner.url.localeCompare(b.runner.url) : a.weight > b.weight ? -1 : 1))
    .map(({ runner }) => runner);
}

/** True when `a` ranks before `b` for `uri`: of two terminals carrying the same URI (made while gateways saw different runners), every gateway keeps the one on the runner ranked first. */
export function ranksBefore(uri: string, a: Runner, b: Runner): boolean {
  return placementOrder(uri, [a, b])[0] === a;
}
