# One image for every Parley service; docker-compose picks the service with `command`.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# `npm run build` also builds the web console into dist/console (Vite), which the gateway serves at /.
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    PARLEY_HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/agents ./agents
USER node
EXPOSE 8080
CMD ["node", "dist/apps/gateway/src/main.js"]
