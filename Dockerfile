# syntax=docker/dockerfile:1
# One image for every hub service (api, webhook-dispatcher, maintenance, audit-writer, renderer; the
# agent runs from it too). The command picks the service:
#
#   docker build -t brokkr .
#   docker run brokkr                                              # api (the default CMD)
#   docker run brokkr node services/<name>/dist/main.js            # any other service
#
# The api applies pending migrations itself at start (knex locks make concurrent replicas safe);
# the migrations are erasable TypeScript that Node 24 loads natively, so migrations/ ships as is.
ARG NODE_IMAGE=node:24-bookworm-slim
ARG GO_IMAGE=golang:1.26-bookworm

# brokkr-render (tools/renderer: Helm's and kustomize's engines) for the renderer service, built by
# the repository's own recipe, scripts/build-renderer.sh: the same flags and the same version (source
# hash) as in development, so renders cached by one are keyed alike by the other (docs/adr/0043).
FROM ${GO_IMAGE} AS renderer
WORKDIR /src
COPY tools/renderer/ tools/renderer/
COPY scripts/build-renderer.sh scripts/
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    BROKKR_CACHE=/cache bash scripts/build-renderer.sh > /tmp/brokkr-render.path \
 && install -m 0755 "$(cat /tmp/brokkr-render.path)" /brokkr-render

FROM ${NODE_IMAGE} AS build
WORKDIR /src
# The same steps the repository uses: a locked install, then the project-reference build.
COPY package.json package-lock.json tsconfig.json tsconfig.base.json ./
COPY shared/ shared/
COPY services/ services/
COPY migrations/ migrations/
COPY scripts/ scripts/
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
RUN npx tsc -b
# Keep only what runs: production dependencies plus each package's manifest and compiled dist.
# Workspace links in node_modules/@brokkr/* are relative symlinks, so the tree keeps its shape
# under /out; a package's own node_modules (npm nests conflicting versions there) comes along, and
# so does the api's console/ (the operator console's ES modules, served as they are).
RUN npm prune --omit=dev --no-audit --no-fund \
 && mkdir -p /out \
 && cp -a package.json node_modules migrations scripts /out/ \
 && for pkg in shared/* services/*; do \
      mkdir -p "/out/$pkg" && cp -a "$pkg/package.json" "$pkg/dist" "/out/$pkg/" \
      && if [ -d "$pkg/node_modules" ]; then cp -a "$pkg/node_modules" "/out/$pkg/"; fi \
      && if [ -d "$pkg/console" ]; then cp -a "$pkg/console" "/out/$pkg/"; fi; \
    done

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Owned by root and read-only for the service user: nothing under /app is written at run time
# (a minted admin PAK goes to BROKKR__BROKER__PAK_FILE, by default under /tmp).
COPY --from=build /out/ ./
# Where BROKKR__RENDERER__BINARY points by default; util-linux (unshare, prlimit, setpriv), which
# the renderer wraps each render process in, is part of every Debian image.
COPY --from=renderer /brokkr-render /usr/local/bin/brokkr-render
# `node` (uid 1000) is the unprivileged user the official Node images provide.
USER node
EXPOSE 3000 9101 9102 9103 9104
# The api's node flags are its npm start script's (services/api/package.json): a 4 MiB young
# generation semi-space keeps its RSS under load about 50 MiB lower (ADR 0026).
CMD ["node", "--max-semi-space-size=4", "services/api/dist/main.js"]
