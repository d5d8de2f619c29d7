"""docker-compose.yml, the Dockerfile and prometheus.yml agree with each other and with the files
they mount. No Docker engine runs here, so these read the files: services, pinned images,
ports, bind mounts, start order, and that every address one service uses for another is the
address that service listens on.
"""

from __future__ import annotations

import re
import tomllib
from graphlib import TopologicalSorter
from urllib.parse import urlsplit

from .stack import (
    ROOT,
    SERVICES,
    compose_services,
    host_path,
    host_port,
    load_yaml,
    mounts,
)

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


def dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments) of the Dockerfile, continuation lines joined."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1])
        for line in lines
        if line and not line.startswith("#")
    ]


class TestServices:
    def test_the_five_services_in_start_order(self):
        """jaeger, otel-collector, agent, prometheus and grafana, listed in start order."""
        assert list(SERVICES) == list(compose_services())

    def test_images_are_pinned(self):
        """Every pulled image has a version tag (no `latest`); only the agent is built here."""
        for name, service in compose_services().items():
            if "build" in service:
                assert "agent" == name
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
        assert {"jaeger"} <= graph["otel-collector"]


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

    def test_agent_runs_the_load_replay_on_its_published_metrics_port(self):
        """The agent runs `load` on 0.0.0.0 and the metrics port it publishes."""
        agent = compose_services()["agent"]
        command = agent["command"]
        assert "load" == command[0]
        assert "0.0.0.0" == flag(command, "--metrics-host")
        port = int(flag(command, "--metrics-port"))
        assert port in {host_port(p)[1] for p in agent["ports"]}

    def test_collector_exports_to_jaeger_service(self):
        """The collector's Jaeger exporter points at the jaeger service's OTLP gRPC port."""
        exporter = load_yaml("otel-collector.yaml")["exporters"]["otlp/jaeger"]
        assert "jaeger:4317" == exporter["endpoint"]
        assert exporter["tls"]["insecure"] is True

    def test_prometheus_scrapes_what_listens(self):
        """prometheus.yml scrapes the agent's metrics port (with an `agent` target label), the
        collector's own telemetry and its span-metrics exporter, at the ports they use."""
        services = compose_services()
        collector = load_yaml("otel-collector.yaml")
        reader = collector["service"]["telemetry"]["metrics"]["readers"][0]["pull"]["exporter"]
        listening = {
            ("agent", int(flag(services["agent"]["command"], "--metrics-port"))),
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
        agent_labels = scraped[("agent", int(flag(services["agent"]["command"], "--metrics-port")))]
        assert agent_labels.get("agent")


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
        """The agent service builds from the repository root, where the Dockerfile is."""
        assert "." == compose_services()["agent"]["build"]
        assert (ROOT / "Dockerfile").is_file()
