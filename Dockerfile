# Images for both binaries from one build:
#   docker build --target control-plane -t vexil-control-plane .
#   docker build --target edge -t vexil-edge .
# Runtime: Debian slim (glibc; SQLite is compiled in), a non-root user, and a HEALTHCHECK on /health made with
# bash's /dev/tcp so that no HTTP client has to be installed. The health check reads the port from
# VEXIL_LISTEN / VEXIL_EDGE_LISTEN, so keep those and the listen flag in agreement.

FROM rust:1-bookworm AS build
# SAML sign-in verifies XML signatures with xmlsec1 (samael's bindings, generated with libclang).
RUN apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
       pkg-config libclang-dev libxml2-dev libxmlsec1-dev libssl-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked -p vexil-control-plane -p vexil-edge \
    && mkdir -p /out \
    && cp target/release/vexil-control-plane target/release/vexil-edge /out/

FROM debian:bookworm-slim AS runtime
# The control plane's SAML sign-in links libxmlsec1 (OpenSSL backend), libxml2 and OpenSSL.
RUN apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
       libxmlsec1 libxmlsec1-openssl libxml2 libssl3 \
    && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 vexil \
    && useradd --system --uid 10001 --gid vexil --home-dir /data --shell /usr/sbin/nologin vexil \
    && mkdir -p /data && chown vexil:vexil /data
# GET /health on the port of $1 (host:port); healthy on a 200.
RUN printf '%s\n' '#!/bin/bash' \
      'exec 3<>"/dev/tcp/127.0.0.1/${1##*:}" || exit 1' \
      'printf "GET /health HTTP/1.0\r\nHost: localhost\r\n\r\n" >&3' \
      'read -r -t 5 _ status _ <&3 && [ "$status" = 200 ]' \
      > /usr/local/bin/vexil-healthcheck \
    && chmod 755 /usr/local/bin/vexil-healthcheck
WORKDIR /data
USER 10001:10001

FROM runtime AS control-plane
COPY --from=build /out/vexil-control-plane /usr/local/bin/
ENV VEXIL_LISTEN=0.0.0.0:4242 \
    VEXIL_GRPC_LISTEN=0.0.0.0:4243 \
    DATABASE_URL=sqlite:///data/vexil.db
EXPOSE 4242 4243
VOLUME ["/data"]
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
    CMD ["/bin/bash", "-c", "vexil-healthcheck \"$VEXIL_LISTEN\""]
ENTRYPOINT ["vexil-control-plane"]

FROM runtime AS edge
COPY --from=build /out/vexil-edge /usr/local/bin/
ENV VEXIL_EDGE_LISTEN=0.0.0.0:3063
EXPOSE 3063
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
    CMD ["/bin/bash", "-c", "vexil-healthcheck \"$VEXIL_EDGE_LISTEN\""]
ENTRYPOINT ["vexil-edge"]
CMD ["serve"]
