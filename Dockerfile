# syntax=docker/dockerfile:1
# Gatehouse's image: `docker build -t gatehouse .`, or `docker compose up` with compose.yaml. What it
# needs at run time, and why each line is here: docs/operations.md, "Container".
# test/operations/container-layout.test.ts builds the same layout without Docker from this file (it fails
# on an instruction it does not know), so the image and the test cannot drift apart.
ARG NODE_VERSION=24

# The build: every dependency, dev ones included, to compile dist/ (and the embedded database's migrated
# template in it) and the dashboard. The manifests come first, so a change of source keeps the npm ci layer.
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/sdk/package.json packages/sdk/
COPY dashboard/package.json dashboard/
# --ignore-scripts: `prepare` would build before the source is here (the build is the next RUN), and
# esbuild's install script is denied anyway (allowScripts in package.json).
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build && npm run build:dashboard

# The image: production dependencies, the compiled server, the dashboard and the migrations. No source,
# no compiler, no dev dependency; the service runs as the unprivileged `node` user of the base image.
FROM node:${NODE_VERSION}-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
# No source here to build: without `prepare`, `npx gatehouse` (the CLI the server's messages name) links the
# app into npx's cache as in a checkout, instead of failing on a build it cannot run.
RUN npm pkg delete scripts.prepare
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts --no-audit --no-fund
# Owned by the service's user: a new data directory is a copy of the embedded database's template
# (dist/platform/db/embedded-template), and PGlite made many of its files readable by their owner only.
COPY --from=build --chown=node:node /app/dist dist/
COPY --from=build /app/dashboard/dist dashboard/dist/
COPY --from=build /app/migrations migrations/
# The CLI's script is the user's too: `npx gatehouse` links it into the user's npx cache and marks it executable.
COPY --from=build --chown=node:node /app/bin bin/
COPY --from=build /app/scripts/start.js /app/scripts/build-state.js scripts/
# The embedded database's directory, a volume the service's user owns (a new named volume takes it over).
RUN mkdir /data && chown node:node /data
ENV HOST=0.0.0.0 PORT=3000 GATEHOUSE_DATA_DIR=/data
VOLUME /data
USER node
EXPOSE 3000
# The base image has no curl: node asks /healthz (the process answers; /readyz would also ask the database).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((res) => process.exit(res.ok ? 0 : 1), () => process.exit(1))"]
# `npm start` without npm (which would stay resident as a parent between `docker stop` and the server):
# the same node flags and script. node is PID 1 itself, with no init: the kernel gives PID 1 no default
# signal actions, but the service handles SIGTERM and SIGINT (drain, close the database, exit 0) and
# starts no child process, so there is nothing to forward signals to or to reap.
CMD ["node", "--max-semi-space-size=4", "scripts/start.js"]
