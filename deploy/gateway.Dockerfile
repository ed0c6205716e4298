# The AHP gateway. It never loads node-pty, but `npm ci` builds it as a dependency of the package.
FROM node:20-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# The package's postinstall patches node-pty from here, as on any install.
COPY patches ./patches
COPY tsconfig.json tsconfig.build.json ./
COPY console ./console
COPY gen ./gen
COPY lib ./lib
COPY ahp ./ahp
COPY gateway ./gateway
# npm ci runs the package's prepare script, which compiles the TypeScript into dist/app and bundles the
# browser console into dist/console (typescript, esbuild and tsx are dev dependencies); the dev
# dependencies are dropped afterwards.
RUN npm ci && npm prune --omit=dev

FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10002 gateway
WORKDIR /app
COPY --from=build /app /app
USER 10002
EXPOSE 7071 9465
HEALTHCHECK --interval=10s --timeout=3s CMD ["node", "-e", "fetch('http://127.0.0.1:7071/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Malloc asks for huge pages (lib/service-node-options.ts, SERVICE_MALLOC_TUNABLES).
ENV GLIBC_TUNABLES=glibc.malloc.hugetlb=1
ENTRYPOINT ["/usr/bin/tini", "--", "node", "--enable-source-maps", "--initial-old-space-size=64", "--interrupt-budget=16896", "dist/app/gateway/main.js"]
CMD ["--host", "0.0.0.0", "--port", "7071", "--metrics-port", "9465", "--runner", "http://runner:7070"]
