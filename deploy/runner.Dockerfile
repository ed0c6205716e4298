# The terminal runner: node-pty is compiled in the build stage; the final image carries a shell,
# coreutils and an init (tini) so orphaned processes of closed terminals are reaped at once.
FROM node:20-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
# Without scripts, the package's prepare (which also bundles the browser console, which the runner
# does not serve) is skipped; node-pty is patched (patches/: no terminal inherits another's master)
# and then built on its own, as the package's postinstall does.
RUN npm ci --ignore-scripts && npx --no-install patch-package --error-on-fail && npm rebuild node-pty
COPY tsconfig.json tsconfig.build.json ./
COPY gen ./gen
COPY lib ./lib
COPY services ./services
COPY deploy/healthcheck-runner.mjs ./deploy/healthcheck-runner.mjs
# Compiled into dist/app (the shell integration scripts stay in services/, where the runner finds
# them); the compiler and the other dev dependencies are dropped afterwards.
RUN npx tsc -p tsconfig.build.json && npm prune --omit=dev

FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends bash zsh coreutils procps less tini ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 --shell /bin/bash runner
WORKDIR /app
COPY --from=build /app /app
USER 10001
ENV SHELL=/bin/bash HOME=/home/runner
EXPOSE 7070 9464
HEALTHCHECK --interval=10s --timeout=3s CMD ["node", "deploy/healthcheck-runner.mjs", "7070"]
# Malloc asks for huge pages (lib/service-node-options.ts, SERVICE_MALLOC_TUNABLES).
ENV GLIBC_TUNABLES=glibc.malloc.hugetlb=1
ENTRYPOINT ["/usr/bin/tini", "--", "node", "--enable-source-maps", "--initial-old-space-size=128", "--interrupt-budget=16896", "dist/app/services/runner/main.js"]
# The runner runs arbitrary code: it listens beyond loopback only here, behind its bearer token (RUNNER_TOKEN).
CMD ["--host", "0.0.0.0", "--port", "7070", "--metrics-port", "9464"]
