# One image for the gateway and every service; docker-compose.yml picks the entry point.
FROM node:24-bookworm-slim
WORKDIR /app
RUN npm install -g pnpm@10.34.8
COPY pnpm-lock.yaml pnpm-workspace.yaml package.json ./
COPY gateway/package.json gateway/
COPY packages packages
COPY services services
COPY gateway gateway
RUN pnpm install --frozen-lockfile --prod=false
ENV NODE_ENV=production
USER node
# Overridden per service in docker-compose.yml, for example services/users/src/main.ts.
CMD ["node", "gateway/src/main.ts"]
