"""Tests for structured values (`_structured.py`): the key-aware walk and JSON text as data."""

from __future__ import annotations

import copy
import json

from zeroclaw_obs.redaction import MAX_DEPTH, Redactor

PW = "Zq8Wx7Vc6Bn5Ml4K"
M = "[REDACTED:sensitive_key]"


class TestValueWalker:
    def test_values_under_sensitive_keys_at_any_depth(self) -> None:
        """A value under a sensitive key is masked at any depth; the rest keeps its shape."""
        value = {"a": [{"b": {"client_secret": PW, "city": "Oslo"}}], "apiKey": 12345}

        assert (
            {"a": [{"b": {"client_secret": M, "city": "Oslo"}}], "apiKey": M},
            {"sensitive_key": 2},
        ) == Redactor().redact_value_report(value)

    def test_metadata_inside_a_sensitive_container_is_kept(self) -> None:
        """Under a sensitive container, `type`/`expires_in`-like fields describe it and stay."""
        value = {"token": {"type": "bearer", "expires_in": 3600, "value": PW}}

        assert {"token": {"type": "bearer", "expires_in": 3600, "value": M}} == (
            Redactor().redact_value(value)
        )

    def test_measurements_under_sensitive_keys_are_kept(self) -> None:
        """Floats and counts under 1000 under a sensitive key are measurements; a PIN is not."""
        value = {"get_deploy_token": 1.79e09, "session": 3, "token": "0.5", "pin_password": 4821}

        assert {"get_deploy_token": 1.79e09, "session": 3, "token": "0.5", "pin_password": M} == (
            Redactor().redact_value(value)
        )

    def test_describing_keys_keep_their_values(self) -> None:
        """`secret_name`, `token_count`, `max_tokens`, `password_reset_url` and `auth` stay."""
        value = {
            "secret_name": "prod-db",
            "token_count": 12,
            "usage": {"input_tokens": 5, "max_tokens": 4096},
            "password_reset_url": "https://example.com/reset",
            "auth": {"method": "oauth"},
        }

        assert value == Redactor().redact_value(value)

    def test_url_with_credentials_under_a_describing_key_is_still_redacted(self) -> None:
        """A describing key keeps its value only when the value itself holds no secret."""
        value = {"password_reset_url": f"https://u:{PW}@example.com/reset"}

        assert {"password_reset_url": "https://[REDACTED:url_credentials]@example.com/reset"} == (
            Redactor().redact_value(value)
        )

    def test_name_value_pairs(self) -> None:
        """In `{"name": "DB_PASSWORD", "value": …}` the value is masked."""
        value = {"env": [{"name": "DB_PASSWORD", "value": PW}, {"name": "REGION", "value": "eu"}]}

        assert {
            "env": [{"name": "DB_PASSWORD", "value": M}, {"name": "REGION", "value": "eu"}]
        } == (Redactor().redact_value(value))

    def test_argv_lists(self) -> None:
        """In an argv list the item after a sensitive flag is masked; other flags stay."""
        value = ["deploy", "--region", "eu-west-1", "--api-key", PW, "--yes"]

        assert ["deploy", "--region", "eu-west-1", "--api-key", M, "--yes"] == (
            Redactor().redact_value(value)
        )

    def test_card_numbers_stored_as_integers(self) -> None:
        """A Luhn-valid card stored as an int is replaced; an order number that fails Luhn stays."""
        value = {"card": 4111111111111111, "order_id": 4111111111111112}

        assert {"card": "[REDACTED:payment_card]", "order_id": 4111111111111112} == (
            Redactor().redact_value(value)
        )

    def test_tuples_keys_and_nesting_are_rebuilt(self) -> None:
        """Nested tuples stay tuples, a key holding PII is renamed in place, order is kept."""
        value = {"a": 1, "bob@example.com": ("x", ("y", f"token={PW}")), "z": [(), ("k",)]}

        assert {
            "a": 1,
            "[REDACTED:email]": ("x", ("y", "token=[REDACTED:key_value]")),
            "z": [(), ("k",)],
        } == Redactor().redact_value(value)

    def test_input_is_never_mutated(self) -> None:
        """The walk builds new containers and leaves the input as it was."""
        value = {"password": PW, "nested": [{"token": "abc"}, ("x", {"secret": PW})]}
        before = copy.deepcopy(value)

        Redactor().redact_value(value)

        assert before == value

    def test_markers_under_sensitive_keys_are_kept_and_not_counted(self) -> None:
        """A value that is already a marker stays as is, with a count of 0."""
        value = {"password": "[REDACTED:key_value]", "token": M}

        assert (value, {}) == Redactor().redact_value_report(value)

    def test_depth_is_bounded(self) -> None:
        """Containers nested deeper than `MAX_DEPTH` become `[REDACTED:max_depth]`."""
        value: list[object] = []
        node = value
        for _ in range(MAX_DEPTH + 3):
            child: list[object] = []
            node.append(child)
            node = child

        redacted, report = Redactor().redact_value_report(value)
        for _ in range(MAX_DEPTH):
            redacted = redacted[0]

        assert ("[REDACTED:max_depth]", {"max_depth": 1}) == (redacted, report)


class TestRoutingKeys:
    """PagerDuty's Events API key, `routing_key`/`integration_key`/`service_key`, is known by
    its value (32 lowercase hex): a message broker's `routing_key` is a harmless dotted word."""

    KEY = "3f9a1c2e7b4d5a6f8e0c1b2a3d4e5f60"

    def test_a_pagerduty_routing_key_is_masked(self) -> None:
        value = {"type": "pagerduty", "routingKey": self.KEY, "v1": {"service_key": self.KEY}}

        assert (
            {"type": "pagerduty", "routingKey": M, "v1": {"service_key": M}},
            {"sensitive_key": 2},
        ) == Redactor().redact_value_report(value)

    def test_a_brokers_routing_key_is_kept(self) -> None:
        value = {"exchange": "events", "routing_key": "orders.created", "cache_key": self.KEY}

        assert value == Redactor().redact_value(value)

    def test_in_text_too(self) -> None:
        redactor = Redactor()
        secret = [f"routing_key={self.KEY}", json.dumps({"routingKey": self.KEY})]
        kept = ["routing_key=orders.created.v2", f"cache_key={self.KEY}"]

        assert ([False, False], kept) == (
            [self.KEY in redactor.redact_text(t) for t in secret],
            [redactor.redact_text(t) for t in kept],
        )


class TestJsonTextReader:
    def test_json_string_with_a_sensitive_container_is_read_as_data(self) -> None:
        """A JSON document whose sensitive key holds a container is masked structurally."""
        text = json.dumps({"credentials": {"user": "bob", "pass": PW}, "n": 1})

        assert (
            json.dumps({"credentials": {"user": M, "pass": M}, "n": 1}),
            {"sensitive_key": 2},
        ) == (Redactor().redact_text_report(text))

    def test_json_inside_a_json_string(self) -> None:
        """JSON inside a JSON string keeps its structure; only the secret values change."""
        inner = {"database": {"host": "db", "password": PW}, "api_key": PW + "x"}
        outer = {"tool_call_id": "call_1", "content": json.dumps(inner)}
        kv = "[REDACTED:key_value]"

        as_text = json.loads(Redactor().redact_text(json.dumps(outer)))
        as_value = Redactor().redact_value(outer)

        assert [{"database": {"host": "db", "password": kv}, "api_key": kv}] * 2 == [
            json.loads(as_text["content"]),
            json.loads(as_value["content"]),
        ]

    def test_sensitive_container_in_a_json_string_value(self) -> None:
        """A JSON string leaf with a sensitive container is parsed and masked as data."""
        value = {"body": json.dumps({"credentials": {"user": "bob", "pass": PW}})}

        assert {"body": json.dumps({"credentials": {"user": M, "pass": M}})} == (
            Redactor().redact_value(value)
        )

    def test_compact_documents_stay_compact(self) -> None:
        """A compact document is written back with compact separators."""
        text = json.dumps({"secret": {"a": PW}, "k": [1, 2]}, separators=(",", ":"))

        assert '{"secret":{"a":"[REDACTED:sensitive_key]"},"k":[1,2]}' == Redactor().redact_text(
            text
        )

    def test_documents_without_secrets_are_returned_unchanged(self) -> None:
        """A JSON document with nothing to mask comes back byte for byte."""
        text = '{"credentials":  {"user": null},\n "ok": true}'

        assert text == Redactor().redact_text(text)
