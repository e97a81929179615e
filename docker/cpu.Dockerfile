# Builds the patched wheel and .venv with scripts/build.sh; the default command
# runs scripts/test.sh. scripts/docker-ci.sh builds and runs it; by hand:
#   docker build -f docker/cpu.Dockerfile -t paddle-static-hooks:cpu .
# docker/cuda.Dockerfile is this file with other defaults for the build args
# BASE_IMAGE, PADDLE_BASE_REQ and PIP_EXTRA_INDEX_URL.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
# docker/ca-certificates/*.crt: extra CAs (staged by docker-ci.sh from the host),
# trusted by the ca-certificates package installed next.
COPY docker/ca-certificates/ /usr/local/share/ca-certificates/
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        ca-certificates git libgomp1 python3 python3-pip python3-venv unzip \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /paddle-static-hooks
COPY . .
# The base wheel: base.pin's requirement unless PADDLE_BASE_REQ names another
# (scripts/build.sh --base-req); pip reads PIP_EXTRA_INDEX_URL itself.
ARG PADDLE_BASE_REQ=
ARG PIP_EXTRA_INDEX_URL=
RUN scripts/build.sh
CMD ["scripts/test.sh"]
