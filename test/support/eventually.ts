/** Polls `check` every 20 ms until it holds or `ms` passes; returns whether it held. */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 5_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}

/** Whether `action` resolves (rather than rejects), for polling until a service answers. */
export async function succeeds(action: () => Promise<unknown>): Promise<boolean> {
  return action().then(
    () => true,
    () => false,
  );
}
