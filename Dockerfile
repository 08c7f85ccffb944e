# The gateway as a container image: build, run, volumes, health and signals in docs/container.md.
#
#   docker build -t agent-gateway .
#   docker run -d --name agent -v agent-home:/data -p 8644:8644 --stop-timeout 45 agent-gateway
#
# Debian (glibc), not Alpine: the native addon fs-native-extensions (kernel file locks) ships
# prebuilt binaries for glibc Linux on x64 and arm64 only, and is loaded from node_modules.

# Stage 1: the bundle in dist/, built with every dependency.
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# No scripts: `prepare` would build dist/ before the sources are copied; the next step builds it.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
RUN node scripts/build.mjs

# Stage 2: production dependencies only (the addon and what the health check reads YAML with).
# No scripts: the only install script in the tree is esbuild's, a dev dependency; the addon's
# binaries come prebuilt in its package.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
    && node -e "require('fs-native-extensions')"

# Stage 3: what runs.
FROM node:20-bookworm-slim
# tini as PID 1: it hands SIGTERM and SIGINT to the gateway, and reaps the processes that runs
# leave behind when their parent dies (Node does not reap processes that are not its children).
# bubblewrap for the sandbox of scripts, terminal commands and command agents (docs/processes.md);
# it needs user namespaces, which Docker's default seccomp profile refuses: run the container with
# `--security-opt seccomp=unconfined` (or a profile allowing clone with CLONE_NEWUSER) to have it,
# else the gateway warns at start and runs them unconfined (docs/container.md).
# /data owned by node before VOLUME, so that a new volume starts writable for it; `agent` on
# PATH for `docker exec <container> agent cron list` and the like.
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini=0.19.0-1+b3 bubblewrap=0.8.0-2+deb12u1 \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir /data \
    && chown node:node /data \
    && ln -s /app/dist/agent.js /usr/local/bin/agent
WORKDIR /app
ENV NODE_ENV=production \
    AGENT_HOME=/data
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY --from=build /src/dist ./dist
COPY plugins ./plugins
COPY docker/healthcheck.mjs ./docker/healthcheck.mjs
# Jobs, run records, the webhook inbox and config.yaml live in AGENT_HOME: keep it on a volume.
VOLUME ["/data"]
# The webhook listener's default port (platforms.webhook.extra.port); it is off unless config.yaml turns it on.
EXPOSE 8644
USER node
# GET /health on the listener when config.yaml turns it on; with the listener off it only reports
# that the gateway runs (docs/container.md, "Health").
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["node", "/app/docker/healthcheck.mjs"]
ENTRYPOINT ["/usr/bin/tini", "--"]
# What `npm start` runs, with its Node option (docs/gateway.md, "Running it").
CMD ["node", "--v8-pool-size=1", "dist/agent.js", "gateway"]
