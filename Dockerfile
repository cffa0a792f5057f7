# One image for the gateway and every service; docker-compose.yml picks the entry point.
FROM node:24-bookworm-slim
WORKDIR /app
RUN npm install -g pnpm@10.34.8
COPY pnpm-lock.yaml pnpm-workspace.yaml package.json ./
COPY gateway/package.json gateway/
COPY packages packages
COPY services services
COPY gateway gateway
COPY web web
RUN pnpm install --frozen-lockfile --prod=false
# The web app the gateway serves at / (WEB_ROOT web/dist).
RUN pnpm --filter @kn/web build
# The search service's index file (SEARCH_INDEX_PATH): a volume mounted here starts out owned by
# the user the processes run as.
RUN mkdir -p /var/lib/search && chown node:node /var/lib/search
ENV NODE_ENV=production
USER node
# Overridden per service in docker-compose.yml, for example services/users/src/main.ts.
CMD ["node", "gateway/src/main.ts"]
