# The gateway's production image. TypeScript runs through tsx, as with `npm start`.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY projections ./projections
# The upstream simulator: the entry point starts it when CHANNELS leaves channels out (all, when unset).
COPY simulator ./simulator
# The data directory belongs to the user the gateway runs as; a named volume mounted here takes
# this ownership when it is first created.
RUN mkdir -p /data && chown node:node /data
ENV NODE_ENV=production PORT=8080 HOST=0.0.0.0 DATA_DIR=/data
USER node
VOLUME /data
EXPOSE 8080
CMD ["node", "--import", "tsx", "src/main.ts"]
