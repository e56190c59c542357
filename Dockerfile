# The gateway's production image. TypeScript runs through tsx, as with `npm start`.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY projections ./projections
ENV NODE_ENV=production PORT=8080 HOST=0.0.0.0 DATA_DIR=/data
USER node
EXPOSE 8080
CMD ["node", "--import", "tsx", "src/main.ts"]
