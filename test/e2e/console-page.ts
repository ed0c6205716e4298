import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { freePort } from "../../lib/listen.js";
import { eventually } from "../support/eventually.js";
import { useStarted } from "../support/use-started.js";
import { startRunnerProcess, type RunnerProcess } from "./runner-process.js";
import { ROOT, startServiceProcess, type ServiceProcess } from "./service-process.js";

/** The Chromium the console tests drive, if this machine has one. */
export const CHROMIUM = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find((path) => path && existsSync(path));
if (!CHROMIUM) console.warn("SKIPPED: the browser console tests need Chromium: apt-get install chromium (or set CHROMIUM_PATH)");

const RUNNER_TOKEN = "console-runner-token";
/** The gateway's connection token in the console tests. */
export const GATEWAY_TOKEN = "console-gateway-token";

/** A runner and a gateway serving the console (built from the sources as they are now), and a browser to open it in. */
export interface ConsoleServices {
  runner: RunnerProcess;
  gateway: ServiceProcess;
  browser: Browser;
  home: string;
  /** The console's address, token included. */
  readonly url: string;
  /** Starts the gateway again on its port (after a test stopped it). */
  startGateway(): Promise<void>;
}

/** Starts the services for the console tests around the call; terminals run `shell` in a scratch HOME. */
export function useConsoleServices(shell = "/bin/sh"): ConsoleServices {
  return useStarted("the console's services", () => startConsoleServices(shell), async (services) => {
    await services.browser.close();
    await services.gateway.stop();
    await services.runner.stop();
  });
}

async function startConsoleServices(shell: string): Promise<ConsoleServices> {
  execFileSync(process.execPath, ["--import", "tsx", "console/build.ts"], { cwd: ROOT, stdio: "ignore" });
  const home = mkdtempSync(join(tmpdir(), "console-home-"));
  const runner = await startRunnerProcess(["--port", "0", "--token", RUNNER_TOKEN], { SHELL: shell, HOME: home, ENV: "", PS1: "$ " });
  const port = await freePort();
  const launchGateway = () => startServiceProcess("gateway/main.ts", ["--port", String(port), "--runner", runner.url, "--token", GATEWAY_TOKEN], { RUNNER_TOKEN, HOME: home });
  const services: ConsoleServices = {
    runner,
    gateway: await launchGateway(),
    browser: await launchBrowser(),
    home,
    url: `http://127.0.0.1:${port}/?tkn=${GATEWAY_TOKEN}`,
    async startGateway() {
      services.gateway = await launchGateway();
    },
  };
  return services;
}

/** Headless Chromium as the console tests run it. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
  });
}

/** Opens the console at `url` in a new page and waits until it says it is connected. */
export async function openConsole(browser: Browser, url: string, viewport: { width: number; height: number }, deviceScaleFactor = 1): Promise<Page> {
  const page = await browser.newPage({ viewport, deviceScaleFactor });
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(err.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  await page.goto(url);
  await connected(page, () => errors.join("; "));
  return page;
}

/** Waits until the page's badge says it is connected. */
export async function connected(page: Page, details: () => string = () => ""): Promise<void> {
  if (!(await eventually(async () => (await page.textContent("#connection")) === "connected", 15_000))) {
    throw new Error(`the console did not connect: ${await page.textContent("#connection")} ${details()}`);
  }
}

/** Clicks the terminal and types a line into it. */
export async function typeLine(page: Page, line: string): Promise<void> {
  await page.click("#screen");
  await page.keyboard.type(line);
  await page.keyboard.press("Enter");
}

/** The rendered screen as text (xterm draws spaces as no-break spaces). */
export async function screenText(page: Page): Promise<string> {
  return ((await page.locator(".xterm-rows").innerText()) ?? "").replace(/\u00a0/g, " ");
}

/** The screen's lines without trailing blanks, for comparing two pages. */
export async function screenLines(page: Page): Promise<string> {
  return (await screenText(page))
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n")
    .trimEnd();
}

/** Waits until the screen matches and returns the match; fails showing the screen. */
export async function screenMatching(page: Page, pattern: RegExp, ms = 10_000): Promise<RegExpMatchArray> {
  let match: RegExpMatchArray | null = null;
  const matched = await eventually(async () => (match = [...(await screenText(page)).matchAll(new RegExp(pattern.source, `${pattern.flags}g`))].at(-1) ?? null) !== null, ms);
  if (!matched || !match) throw new Error(`the screen never matched ${pattern}:\n${await screenText(page)}`);
  return match;
}

/** True when nothing is drawn over the middle of the element (someone looking at the page sees it). */
export function uncovered(page: Page, selector: string): Promise<boolean> {
  return page.locator(selector).evaluate((element) => {
    const box = element.getBoundingClientRect();
    const top = element.ownerDocument.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
    return top !== null && element.contains(top);
  });
}
