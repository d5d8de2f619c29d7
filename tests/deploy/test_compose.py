"""docker-compose.yml, the Dockerfile and prometheus.yml agree with each other and with the files
they mount. No Docker engine runs here, so these read the files: services, pinned images,
ports, bind mounts, secrets, start order, and that every address one service uses for another
is the address that service listens on. The agent runs `zeroclaw-obs serve` and the `load`
service drives it over HTTP with the same token (`load --target`); that pair runs for real in
`tests/server/test_load_target.py` and `test_dashboard_queries.py`.
"""

from __future__ import annotations

import json
import re
import tomllib
from graphlib import TopologicalSorter
from urllib.parse import urlsplit

from .stack import (
    ROOT,
    SERVICES,
    compose_services,
    dockerfile,
    host_path,
    host_port,
    image_file,
    load_yaml,
    mounts,
)

BUILT = {"token", "agent", "load"}
"""The services that run the image built from this repository."""
CONVENTIONAL_PORTS = {
    "otel-collector": {4317, 4318},
    "jaeger": {16686},
    "prometheus": {9090},
    "grafana": {3000},
}


def depends_on(service: dict) -> list[str]:
    value = service.get("depends_on", [])
    return list(value) if isinstance(value, dict | list) else [value]


def flag(command: list[str], name: str) -> str:
    """The value of `--name VALUE` or `--name=VALUE` in a command list."""
    for i, arg in enumerate(command):
        if arg == name:
            return command[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    raise AssertionError(f"{name} not in {command}")


class TestServices:
    def test_the_services_in_start_order(self):
        """jaeger, otel-collector, token, agent, load, prometheus and grafana, in start order."""
        assert list(SERVICES) == list(compose_services())

    def test_images_are_pinned(self):
        """Every pulled image has a version tag (no `latest`); only the token, agent and load
        services are built here, all into the one local image."""
        for name, service in compose_services().items():
            if "build" in service:
                assert name in BUILT
                assert "zeroclaw-obs:local" == service["image"]
                continue
            image = service["image"]
            assert ":" in image, image
            tag = image.rsplit(":", 1)[1]
            assert "latest" != tag and re.search(r"\d+\.\d+", tag), image

    def test_conventional_ports_published(self):
        """4317/4318 on the collector, 16686 Jaeger, 9090 Prometheus, 3000 Grafana; each host
        port is published once and maps to the same container port."""
        services = compose_services()
        published = [
            (name, *host_port(p)) for name, s in services.items() for p in s.get("ports", [])
        ]
        hosts = [host for _, host, _ in published]
        assert len(hosts) == len(set(hosts))
        assert all(host == container for _, host, container in published)
        for name, ports in CONVENTIONAL_PORTS.items():
            assert ports <= {host for service, host, _ in published if service == name}, name

    def test_depends_on_targets_exist_and_follow_start_order(self):
        """Every `depends_on` names a service listed earlier; the graph has no cycle."""
        services = compose_services()
        order = list(services)
        graph = {}
        for name, service in services.items():
            targets = depends_on(service)
            graph[name] = set(targets)
            for target in targets:
                assert target in services, (name, target)
                assert order.index(target) < order.index(name), (name, target)
        tuple(TopologicalSorter(graph).static_order())
        assert {"prometheus", "jaeger"} <= graph["grafana"]
        assert {"agent", "otel-collector"} <= graph["prometheus"]
        assert {"otel-collector"} <= graph["agent"]
        assert {"agent"} == graph["load"]
        assert {"jaeger"} <= graph["otel-collector"]

    def test_the_load_waits_for_a_healthy_agent(self):
        """`load` starts once the agent's health check passes, so its first check of the target
        (exit 2 when unreachable) never races the agent's start."""
        assert {"agent": {"condition": "service_healthy"}} == compose_services()["load"][
            "depends_on"
        ]


class TestMounts:
    def test_every_mounted_host_path_exists(self):
        """Every bind mount's host path is a file or directory of the repository."""
        for name, service in compose_services().items():
            for source, target in mounts(service):
                assert source.exists(), (name, source)
                assert ROOT in source.parents or ROOT == source, (name, source)
                assert target.startswith("/"), (name, target)

    def test_config_paths_in_commands_are_mounted_files(self):
        """A config path a service is started with is a mounted file that exists."""
        services = compose_services()
        collector = host_path(
            services["otel-collector"], flag(services["otel-collector"]["command"], "--config")
        )
        prometheus = host_path(
            services["prometheus"], flag(services["prometheus"]["command"], "--config.file")
        )
        assert (ROOT / "otel-collector.yaml").resolve() == collector
        assert (ROOT / "prometheus.yml").resolve() == prometheus

    def test_prometheus_rule_files_are_mounted_beside_the_config(self):
        """prometheus.yml's rule files resolve, relative to the config in the container, to
        mounted repository files: the same relative path works in the repo and in Docker."""
        prometheus = compose_services()["prometheus"]
        config_in_container = flag(prometheus["command"], "--config.file")
        base = config_in_container.rsplit("/", 1)[0]
        for rule_file in load_yaml("prometheus.yml")["rule_files"]:
            assert not rule_file.startswith("/")
            assert (ROOT / rule_file).resolve() == host_path(prometheus, f"{base}/{rule_file}")

    def test_prometheus_stores_exemplars(self):
        """Prometheus runs with exemplar storage on."""
        command = compose_services()["prometheus"]["command"]
        assert "exemplar-storage" in flag(command, "--enable-feature").split(",")

    def test_grafana_paths_in_environment_are_mounted(self):
        """A container path in Grafana's environment (the home dashboard) is a mounted file."""
        grafana = compose_services()["grafana"]
        for value in grafana.get("environment", {}).values():
            if str(value).startswith("/"):
                path = host_path(grafana, value)
                assert path is not None and path.is_file(), value


class TestSecrets:
    def test_the_token_is_made_at_first_start_and_shared_read_only(self):
        """`token` writes a fresh key (`zeroclaw-obs keygen`) into a named volume once; `agent`
        serves with it and `load` drives with it, both mounting the volume read-only, and the
        agent starts only after the token exists."""
        compose = load_yaml("docker-compose.yml")
        services = compose_services()
        (volume,) = compose["volumes"]
        token = services["token"]
        script = token["entrypoint"][-1]
        assert "zeroclaw-obs keygen > /run/zeroclaw/token" in script
        assert script.startswith("test -s /run/zeroclaw/token ||")  # kept across restarts
        assert [f"{volume}:/run/zeroclaw"] == token["volumes"]
        for service in ("agent", "load"):
            spec = services[service]
            assert [f"{volume}:/run/zeroclaw:ro"] == spec["volumes"]
            assert "/run/zeroclaw/token" == flag(spec["command"], "--token-file")
        token_start = services["agent"]["depends_on"]["token"]["condition"]
        assert "service_completed_successfully" == token_start

    def test_no_token_is_in_the_repository_or_the_image(self):
        """No compose secret file, no token file under deploy/, and the image's token
        directory belongs to the runtime's user (the volume takes its owner)."""
        compose = load_yaml("docker-compose.yml")
        assert "secrets" not in compose
        assert not any("token" in p.name for p in (ROOT / "deploy").iterdir())
        runs = " ".join(args for instruction, args in dockerfile() if instruction == "RUN")
        assert "chown 10001 /run/zeroclaw" in runs

    def test_the_api_port_is_published_on_the_loopback_only(self):
        """The agent's API port is bound to 127.0.0.1 (open it wider behind a TLS proxy)."""
        (published,) = compose_services()["agent"]["ports"]
        assert published.startswith("127.0.0.1:")


class TestWiring:
    def test_agent_exports_otlp_to_the_collectors_grpc_receiver(self):
        """The agent's OTLP endpoint is the collector service on its gRPC receiver port."""
        services = compose_services()
        env = services["agent"]["environment"]
        endpoint = urlsplit(env["OTEL_EXPORTER_OTLP_ENDPOINT"])
        grpc = load_yaml("otel-collector.yaml")["receivers"]["otlp"]["protocols"]["grpc"]
        assert "otel-collector" == endpoint.hostname
        assert grpc["endpoint"].endswith(f":{endpoint.port}")
        assert "grpc" == env["OTEL_EXPORTER_OTLP_PROTOCOL"]
        assert env["OTEL_SERVICE_NAME"]

    def test_agent_serves_a_shipped_agent_file_on_its_published_port(self):
        """The agent runs `serve` on 0.0.0.0 and the port it publishes, with an agent file the
        Dockerfile copies into the image from this repository."""
        agent = compose_services()["agent"]
        command = agent["command"]
        assert "serve" == command[0]
        assert "0.0.0.0" == flag(command, "--host")
        port = int(flag(command, "--port"))
        assert port in {host_port(p)[1] for p in agent["ports"]}
        agent_file = image_file(flag(command, "--scenario"))
        assert agent_file is not None and agent_file.is_file()
        assert (ROOT / "deploy" / "agent.yaml") == agent_file

    def test_the_health_check_asks_healthz_on_the_served_port(self):
        """The agent's health check reads `/healthz` on the port `serve` binds, with the
        image's own python (the slim image has no curl), and wants status `ok` (not draining)."""
        agent = compose_services()["agent"]
        check = agent["healthcheck"]["test"]
        assert ["CMD", "python", "-c"] == check[:3]
        port = flag(agent["command"], "--port")
        assert f"http://127.0.0.1:{port}/healthz" in check[3]
        assert "'ok'" in check[3]
        compile(check[3], "healthcheck", "exec")

    def test_load_drives_the_agent_service_over_http(self):
        """`load --target` names the agent service on the port it serves, with the shipped
        scenario folder as the messages, and approves what the agent asks."""
        services = compose_services()
        command = services["load"]["command"]
        assert "load" == command[0]
        assert (ROOT / "scenarios") == image_file(command[1] + "/x").parent
        target = urlsplit(flag(command, "--target"))
        assert ("http", "agent") == (target.scheme, target.hostname)
        assert flag(services["agent"]["command"], "--port") == str(target.port)
        assert "--approve" in command

    def test_the_dockerfile_default_is_the_served_agent(self):
        """`docker run` of the image alone serves the same agent on the port it exposes."""
        agent = compose_services()["agent"]["command"]
        (cmd,) = [json.loads(args) for instruction, args in dockerfile() if instruction == "CMD"]
        (exposed,) = [args for instruction, args in dockerfile() if instruction == "EXPOSE"]
        assert "serve" == cmd[0]
        assert flag(agent, "--scenario") == flag(cmd, "--scenario")
        assert flag(cmd, "--port") == exposed

    def test_collector_exports_to_jaeger_service(self):
        """The collector's Jaeger exporter points at the jaeger service's OTLP gRPC port."""
        exporter = load_yaml("otel-collector.yaml")["exporters"]["otlp/jaeger"]
        assert "jaeger:4317" == exporter["endpoint"]
        assert exporter["tls"]["insecure"] is True

    def test_prometheus_scrapes_what_listens(self):
        """prometheus.yml scrapes the agent's served port, whose /metrics needs no token (with an
        `agent` target label), the
        collector's own telemetry and its span-metrics exporter, at the ports they use."""
        services = compose_services()
        collector = load_yaml("otel-collector.yaml")
        reader = collector["service"]["telemetry"]["metrics"]["readers"][0]["pull"]["exporter"]
        agent_port = int(flag(services["agent"]["command"], "--port"))
        listening = {
            ("agent", agent_port),
            ("otel-collector", int(reader["prometheus"]["port"])),
            ("otel-collector", int(collector["exporters"]["prometheus"]["endpoint"].split(":")[1])),
            ("localhost", 9090),
        }
        scraped = {}
        for job in load_yaml("prometheus.yml")["scrape_configs"]:
            for static in job["static_configs"]:
                for target in static["targets"]:
                    host, port = target.rsplit(":", 1)
                    scraped[(host, int(port))] = static.get("labels", {})
        assert listening == set(scraped)
        assert scraped[("agent", agent_port)].get("agent")


class TestDockerfile:
    def test_base_image_pinned_python_311(self):
        """The image starts from a pinned python 3.11 slim tag."""
        (base,) = [args for instruction, args in dockerfile() if instruction == "FROM"]
        assert re.fullmatch(r"python:3\.11\.\d+-slim(-\w+)?", base), base

    def test_runs_as_a_non_root_user(self):
        """The last USER is not root."""
        users = [args for instruction, args in dockerfile() if instruction == "USER"]
        assert users and users[-1] not in {"root", "0"}

    def test_entrypoint_is_the_console_script(self):
        """ENTRYPOINT runs the `zeroclaw-obs` console script pyproject.toml installs."""
        scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
        (entrypoint,) = [args for instruction, args in dockerfile() if instruction == "ENTRYPOINT"]
        assert list(scripts) == [__import__("json").loads(entrypoint)[0]]

    def test_copied_sources_are_in_the_build_context(self):
        """Every COPY source exists (scenarios/ once the load replay ships them) and is not
        excluded by .dockerignore."""
        ignored = {
            line.strip().rstrip("/")
            for line in (ROOT / ".dockerignore").read_text().splitlines()
            if line.strip() and not line.startswith("#")
        }
        for instruction, args in dockerfile():
            if instruction != "COPY":
                continue
            *sources, _ = args.split()
            for source in sources:
                assert source.rstrip("/") not in ignored, source
                assert (ROOT / source).exists(), source

    def test_compose_builds_the_agent_from_this_dockerfile(self):
        """The services of our image build from the repository root, where the Dockerfile is."""
        for service in BUILT:
            assert "." == compose_services()[service]["build"]
        assert (ROOT / "Dockerfile").is_file()
