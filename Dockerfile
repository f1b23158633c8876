# syntax=docker/dockerfile:1
# The service as a container: built in one stage, run from a slim, non-root image that holds
# production dependencies and the compiled code only. See docs/operations.md.

# Base images are pinned to exact versions. To pin them to digests as well (recommended for
# production; this repository cannot look digests up when it is built offline), run
#   docker buildx imagetools inspect node:20.20.2-bookworm-slim --format '{{json .Manifest.Digest}}'
# and write the image as node:20.20.2-bookworm-slim@sha256:<digest> (docs/operations.md).
ARG NODE_IMAGE=node:20.20.2-bookworm-slim
# tini as Debian bookworm packages it, pinned like the image.
ARG TINI_VERSION=0.19.0-1+b3

# 1. Build: every dependency (the compiler is a dev dependency), then the compiled code.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
# The SDK's encryption module is compiled with the service: the checkout page serves it.
COPY packages ./packages
# The dashboard's sources, bundled into dist/dashboard (the runtime image holds no bundler).
COPY web ./web
RUN npx tsc -p tsconfig.build.json && node dist/src/dashboard/build.js

# 2. Production dependencies only, installed exactly as locked.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# 3. Runtime: tini as PID 1 (signals reach Node, zombies are reaped), the node user, no npm at boot.
FROM ${NODE_IMAGE} AS runtime
ARG TINI_VERSION
RUN apt-get update \
  && apt-get install -y --no-install-recommends "tini=${TINI_VERSION}" \
  && rm -rf /var/lib/apt/lists/* \
  && mkdir -p /data \
  && chown node:node /data
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4000 \
    DATA_DIR=/data
WORKDIR /app
# Code and dependencies stay owned by root: the service cannot rewrite itself.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY src/checkout/public ./src/checkout/public
COPY src/site/public ./src/site/public
USER node
EXPOSE 4000
VOLUME ["/data"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 4000) + '/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/src/main.js"]
