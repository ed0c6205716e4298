#!/usr/bin/env node
// The ahp-term command: the compiled client from `npm run build` (run by `npm install`).
await import("../dist/app/cli/main.js");
