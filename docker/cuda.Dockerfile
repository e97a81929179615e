# Builds the patched wheel and .venv with scripts/build.sh from Paddle's GPU
# wheel; the default command runs scripts/test.sh (run with --gpus all).
#   docker build -f docker/cuda.Dockerfile -t paddle-static-hooks:cuda .
# Same as docker/cpu.Dockerfile but for the defaults of the build args
# BASE_IMAGE, PADDLE_BASE_REQ and PIP_EXTRA_INDEX_URL. base.pin must list the
# GPU wheel's sha256 (scripts/build.sh refuses it otherwise).
ARG BASE_IMAGE=nvidia/cuda:12.6.3-cudnn-runtime-ubuntu22.04
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
ARG PADDLE_BASE_REQ=paddlepaddle-gpu==3.3.1
ARG PIP_EXTRA_INDEX_URL=https://www.paddlepaddle.org.cn/packages/stable/cu126/
RUN scripts/build.sh
CMD ["scripts/test.sh"]
