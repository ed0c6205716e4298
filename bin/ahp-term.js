#!/usr/bin/env node
// The ahp-term command: the TypeScript sources run through tsx, as the services do.
import { register } from "tsx/esm/api";

register();
await import("../cli/main.ts");
