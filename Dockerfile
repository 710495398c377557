# compactor image: the CLI runs the TypeScript sources through tsx (no build step).
FROM node:20-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY shared ./shared
COPY worker ./worker
COPY producer ./producer
COPY drizzle ./drizzle
USER node
ENTRYPOINT ["node", "worker/bin/compactor.js"]
CMD ["worker"]
