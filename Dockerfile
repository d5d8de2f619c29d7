# The zeroclaw-obs runtime image: the `agent` service of docker-compose.yml, replaying the
# scenarios under /app/scenarios as load, /metrics on :9464, traces over OTLP.
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

RUN useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin zeroclaw
USER 10001

EXPOSE 9464
ENTRYPOINT ["zeroclaw-obs"]
CMD ["load", "/app/scenarios", "--rate", "2", "--metrics-host", "0.0.0.0", "--metrics-port", "9464", "--progress"]
