# syntax=docker/dockerfile:1
#
# One image for all five processes. The process to run is chosen by the command:
#   docker run IMAGE node dist/apps/<gateway|contacts|deals|events|webhooks>/src/main.js
# API key administration uses the same image:
#   docker run IMAGE node dist/apps/gateway/src/cli.js list
#
# The base image is pinned to one Node.js 20 release on Debian bookworm (package.json requires >=20.19).
ARG NODE_IMAGE=node:20.20.2-bookworm-slim

# ---- build: full dependency tree, each app and library compiled by Nx into dist/ ----
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY nx.json tsconfig.base.json ./
COPY tools/build ./tools/build
COPY libs ./libs
COPY apps ./apps
RUN npm run build

# ---- runtime: production dependencies and compiled code only ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# No production dependency has an install script, so none are run.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist/apps ./dist/apps
COPY --from=build /src/dist/libs ./dist/libs
# The `node` user of the base image (uid/gid 1000), numeric so Kubernetes can verify runAsNonRoot.
USER 1000:1000
# Gateway HTTP port; services listen on HEALTH_PORT (3001-3004 by default) for probes only.
EXPOSE 3000
CMD ["node", "dist/apps/gateway/src/main.js"]
