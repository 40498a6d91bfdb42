# proxy-server with Debian's Chromium and the pinned @playwright/mcp.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -o /out/ ./cmd/proxy-server ./cmd/mcp-bridge

FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium nodejs npm ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --omit=dev
COPY --from=build /out/ /usr/local/bin/
ENV PROXY_HOST=0.0.0.0 \
    PROXY_DATABASE_PATH=/data/proxy.db \
    PROXY_BROWSER_EXECUTABLE=/usr/bin/chromium
VOLUME /data
EXPOSE 34501
ENTRYPOINT ["proxy-server"]
CMD ["serve"]
