# The zeroclaw-obs runtime image: the `agent` and `load` services of docker-compose.yml. By
# default it serves the agent of /app/deploy/agent.yaml on :8080 (`zeroclaw-obs
# serve`: the API, the operator page, /metrics and /healthz; without --token-file it prints a
# fresh token once on stderr), traces over OTLP. The compose file passes the token file and
# runs `load --target` in a second container of the same image; its `token` service makes the
# token with `zeroclaw-obs keygen`.
FROM python:3.11.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# The package first, so editing a scenario does not reinstall the dependencies.
COPY pyproject.toml README.md ./
COPY zeroclaw_obs/ zeroclaw_obs/
RUN pip install . && rm -rf build zeroclaw_obs.egg-info

COPY scenarios/ scenarios/
COPY deploy/agent.yaml deploy/

RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin zeroclaw \
    && mkdir -p /run/zeroclaw && chown 10001 /run/zeroclaw && chmod 0700 /run/zeroclaw
# /run/zeroclaw: where compose's `token` service writes the API token (a named volume, which
# takes this directory's owner and mode when it is first created).
USER 10001

EXPOSE 8080
ENTRYPOINT ["zeroclaw-obs"]
CMD ["serve", "--scenario", "/app/deploy/agent.yaml", "--host", "0.0.0.0", "--port", "8080"]
