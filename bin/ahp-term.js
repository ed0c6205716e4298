#!/usr/bin/env node
// The ahp-term command: the compiled client from `npm run build` (run by `npm install`).
const { PACKAGE_VERSION, versionAsked } = await import("../dist/app/lib/cli.js");
if (versionAsked(process.argv.slice(2))) process.stdout.write(`${PACKAGE_VERSION}\n`);
else await import("../dist/app/cli/main.js");
