# syntax=docker/dockerfile:1
#
# One image for all five processes. The process to run is chosen by the command:
#   docker run IMAGE node dist/apps/<gateway|contacts|deals|events|webhooks>/src/main.js
# API key administration uses the same image:
#   docker run IMAGE node dist/apps/gateway/src/cli.js list
#
# The base image is pinned to one release of Node.js 22, the maintained LTS, on Debian bookworm (package.json
# admits Node 20.19+ and 22.13+; the deployment checks build and test the project on this same release).
ARG NODE_IMAGE=node:22.23.5-bookworm-slim

# ---- build: full dependency tree, each app and library compiled by Nx into dist/ ----
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY nx.json tsconfig.base.json tsconfig.json .swcrc ./
COPY tools ./tools
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
# Gateway API port; every process serves probes and metrics on its HEALTH_PORT (services 3001-3004, gateway 3005).
EXPOSE 3000
CMD ["node", "dist/apps/gateway/src/main.js"]
