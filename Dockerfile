# The gateway's production image, in two stages. The gateway runs compiled (dist/), as with `npm start`.

# Build: every dependency, the dashboard built into web/dist by `npm ci` (the prepare script runs
# `npm run build:web`) and the gateway compiled into dist/ (`npm run build`); then the development
# dependencies (the compilers among them) are dropped.
FROM node:20-bookworm-slim AS build
WORKDIR /app
# The npm that CI uses: it honours package.json's allowScripts (the image's npm 10 would not).
RUN npm install -g npm@11.19.1 --no-audit --no-fund
COPY package.json package-lock.json tsconfig.json ./
COPY web ./web
RUN npm ci --no-audit --no-fund \
 && test -f web/dist/index.html
# The sources after the install, so that a change to them leaves the installed layer cached.
COPY tsconfig.build.json ./
COPY src ./src
COPY projections ./projections
COPY simulator ./simulator
RUN npm run build \
 && test -f dist/src/main.js \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

# Run: the production dependencies, the compiled gateway and the built dashboard; nothing of the
# build tools. The sources stay: the gateway reads its default model catalog from
# src/billing/catalog.json (the file a reload re-reads), and `npm run audit` and
# `npm run projections:rebuild` run them through tsx (a production dependency for that).
FROM node:20-bookworm-slim
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/web/dist ./web/dist
COPY --from=build /app/dist ./dist
COPY package.json package-lock.json tsconfig.json ./
COPY src ./src
COPY projections ./projections
# The upstream simulator's sources (its compiled form is in dist/: the entry point starts it when
# CHANNELS leaves channels out, all of them when unset).
COPY simulator ./simulator
# The checked-in channels file: the fallback (no CHANNELS) serves its entries from the simulator.
COPY deploy/channels.example.json ./deploy/channels.example.json
# The data directory belongs to the user the gateway runs as; a named volume mounted here takes
# this ownership when it is first created.
RUN mkdir -p /data && chown node:node /data
ENV NODE_ENV=production PORT=8080 HOST=0.0.0.0 DATA_DIR=/data
USER node
VOLUME /data
EXPOSE 8080
# The command of `npm start`, V8's heap settings included (docs/operations.md, "Memory").
CMD ["node", "--max-old-space-size=1024", "--max-semi-space-size=32", "dist/src/main.js"]
