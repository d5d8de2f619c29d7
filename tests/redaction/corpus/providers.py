"""Formats: the token formats of providers (AWS, GitHub, GitLab, Slack, Stripe, OpenAI, …)."""

from __future__ import annotations

import json
import random
import string

from ._blocks import (
    _ALNUM,
    _B64,
    _B64URL,
    _PRIVATE_PEMS,
    _UPPER_ALNUM,
    _WORDS,
    Case,
    _anthropic,
    _aws_key_id,
    _aws_secret,
    _b64,
    _clean_b64,
    _git_sha,
    _github,
    _google_key,
    _hex,
    _kind,
    _openai,
    _pem,
    _pem_body,
    _pick,
    _pypi,
    _slack_token,
    _stripe,
    _text_case,
    _tok,
    _uuid,
)

# Provider formats ----------------------------------------------------------------------------


@_kind("aws")
def _aws(rng: random.Random, i: int) -> Case:
    """AWS access key ids (`AKIA`/`ASIA` + 16) and 40-character secret keys beside their names."""
    key_id, secret = _aws_key_id(rng), _aws_secret(rng)
    variant = i % 8
    if variant == 0:
        tpl = (
            "[default]\naws_access_key_id = ⟪id⟫\naws_secret_access_key = ⟪secret⟫\n"
            "region = ⟪region⟫\n# rotated ⟪ts⟫ by job ⟪uuid⟫\n"
        )
    elif variant == 1:
        tpl = (
            "export AWS_ACCESS_KEY_ID=⟪id⟫\nexport AWS_SECRET_ACCESS_KEY=⟪secret⟫\n"
            "$ git rev-parse HEAD\n⟪sha⟫\n"
        )
    elif variant == 2:
        tpl = (
            '{\n    "AccessKey": {\n        "UserName": "ci-bot",\n        "AccessKeyId": "⟪id⟫",\n'
            '        "Status": "Active",\n        "SecretAccessKey": "⟪secret⟫",\n'
            '        "CreateDate": "⟪ts⟫"\n    }\n}\n(RequestId: ⟪uuid⟫)'
        )
    elif variant == 3:
        req = _uuid(rng)
        payload = {
            "tool": "aws_cli",
            "result": {
                "AccessKey": {"AccessKeyId": key_id, "SecretAccessKey": secret},
                "ResponseMetadata": {"RequestId": req},
            },
        }
        return Case("aws", payload, (key_id, secret), (req,))
    elif variant == 4:
        tpl = (
            'provider "aws" {\n  region     = "⟪region⟫"\n  access_key = "⟪id⟫"\n'
            '  secret_key = "⟪secret⟫"\n}\n# module ref ⟪sha⟫'
        )
    elif variant == 5:
        tpl = (
            "botocore.exceptions.ClientError: An error occurred (InvalidClientTokenId) when "
            "calling the GetCallerIdentity operation: The security token included in the request "
            "is invalid. AccessKeyId=⟪id⟫ RequestId=⟪uuid⟫"
        )
        return _text_case("aws", rng, tpl, {"id": key_id})
    elif variant == 6:
        session = "IQoJb3JpZ2luX2Vj" + _tok(rng, _B64, rng.randint(280, 400))
        tpl = (
            "AWS_ACCESS_KEY_ID=⟪id⟫\nAWS_SECRET_ACCESS_KEY=⟪secret⟫\nAWS_SESSION_TOKEN=⟪st⟫\n"
            "AWS_REGION=⟪region⟫\nJOB_ID=⟪uuid⟫\n"
        )
        return _text_case(
            "aws", rng, tpl, {"id": _aws_key_id(rng, "ASIA"), "secret": secret, "st": session}
        )
    else:
        tpl = (
            "docker run --rm -e AWS_ACCESS_KEY_ID=⟪id⟫ -e AWS_SECRET_ACCESS_KEY=⟪secret⟫ "
            "ghcr.io/acme/etl@⟪digest⟫ --run-id ⟪uuid⟫"
        )
    return _text_case("aws", rng, tpl, {"id": key_id, "secret": secret})


_TOKEN_CARRIERS = (
    "⟪ts⟫ INFO  client initialised with ⟪token⟫ for ⟪svc⟫ (request ⟪uuid⟫)",
    "$ git log -1 --format=%H\n⟪sha⟫\n$ echo $CI_TOKEN\n⟪token⟫\n",
    '{"tool": "read_file", "path": "deploy/.env", "content": "REGION=⟪region⟫\\nKEY=⟪token⟫\\n", '
    '"request_id": "⟪uuid⟫"}',
    "## Local setup\n\nPaste `⟪token⟫` into your shell profile, then run `make dev` "
    "(tested at ⟪short_sha⟫).\n",
    'Traceback (most recent call last):\n  File "/app/client.py", line ⟪n⟫, in send\n'
    '    raise AuthError(f"rejected {key}")\nAuthError: rejected ⟪token⟫ (trace_id=⟪trace⟫)',
)


def _token_case(
    kind: str,
    rng: random.Random,
    i: int,
    token: str,
    templates: tuple[str, ...],
    lookalikes: dict[str, str] | None = None,
) -> Case:
    """A provider token in a kind-specific carrier, or in one of the generic carriers."""
    pool = templates + _TOKEN_CARRIERS
    return _text_case(kind, rng, _pick(rng, pool, i), {"token": token}, lookalikes=lookalikes)


@_kind("github")
def _github_kind(rng: random.Random, i: int) -> Case:
    """GitHub classic (ghp_), fine-grained (github_pat_), app (ghs_/ghu_) and OAuth (gho_)."""
    token = _github(rng, i)
    if i % 6 == 5:
        sha = _git_sha(rng)
        payload = {"head_sha": sha, "stdout": f"Cloning with {token}\nHEAD is now at {sha[:7]}"}
        return Case("github", payload, (token,), (sha,))
    return _token_case(
        "github",
        rng,
        i,
        token,
        (
            "$ git remote -v\n"
            "origin\thttps://x-access-token:⟪token⟫@github.com/acme/api.git (fetch)\n"
            "$ git rev-parse HEAD\n⟪sha⟫\n",
            "GITHUB_TOKEN=⟪token⟫\nGITHUB_SHA=⟪sha⟫\nGITHUB_RUN_ID=⟪n⟫\n",
            '{"token": "⟪token⟫", "expires_at": "⟪ts⟫", "permissions": {"contents": "read"}, '
            '"x_github_request_id": "⟪uuid⟫"}',
            "gh: HTTP 401: Bad credentials (https://api.github.com/repos/acme/api/commits/⟪sha⟫) "
            "token=⟪token⟫",
        ),
    )


@_kind("gitlab")
def _gitlab(rng: random.Random, i: int) -> Case:
    """GitLab personal access tokens (glpat- + 20)."""
    token = "glpat-" + _tok(rng, _B64URL, 20)
    return _token_case(
        "gitlab",
        rng,
        i,
        token,
        (
            'curl --header "PRIVATE-TOKEN: ⟪token⟫" https://gitlab.com/api/v4/projects/⟪n⟫/pipelines'
            "  # retry for ⟪sha⟫",
            "git clone https://oauth2:⟪token⟫@gitlab.com/acme/infra.git\n"
            "HEAD is now at ⟪short_sha⟫",
            "variables:\n  GITLAB_TOKEN: ⟪token⟫\n  CI_COMMIT_SHA: ⟪sha⟫\n",
        ),
    )


@_kind("slack")
def _slack(rng: random.Random, i: int) -> Case:
    """Slack bot (xoxb-), user (xoxp-), app (xapp-) tokens and incoming webhook URLs."""
    if i % 4 == 3:
        team = "T" + _tok(rng, _UPPER_ALNUM, rng.randint(8, 10))
        bot = "B" + _tok(rng, _UPPER_ALNUM, rng.randint(8, 10))
        url = f"https://hooks.slack.com/services/{team}/{bot}/⟪secret⟫"
        templates = (
            "⟪ts⟫ INFO  notify: POST ⟪url⟫ -> 200 (deploy ⟪short_sha⟫)",
            '{"channel": "#deploys", "webhook_url": "⟪url⟫", "run": "⟪uuid⟫"}',
            "SLACK_WEBHOOK=⟪url⟫\nBUILD_SHA=⟪sha⟫\n",
        )
        secret = _tok(rng, _ALNUM, 24)
        tpl = _pick(rng, templates, i // 4)
        return _text_case("slack", rng, tpl, {"secret": secret}, values={"url": url})
    token = _slack_token(rng, i)
    templates = (
        "SLACK_BOT_TOKEN=⟪token⟫\nSLACK_CHANNEL=C0⟪n⟫\nDEPLOY_ID=⟪uuid⟫\n",
        'client = WebClient(token="⟪token⟫")  # run ⟪uuid⟫',
        "SLACK_APP_TOKEN=⟪token⟫\n# socket mode, build ⟪sha⟫\n",
    )
    return _token_case("slack", rng, i, token, templates)


@_kind("stripe")
def _stripe_kind(rng: random.Random, i: int) -> Case:
    """Stripe secret (sk_live_, sk_test_) and restricted (rk_live_) keys."""
    token = _stripe(rng, i)
    templates = (
        "curl https://api.stripe.com/v1/customers/⟪cus⟫ -u ⟪token⟫: (request ⟪uuid⟫)",
        'import stripe\nstripe.api_key = "⟪token⟫"\nstripe.Customer.retrieve("⟪cus⟫")\n',
        "STRIPE_SECRET_KEY=⟪token⟫\nSTRIPE_ACCOUNT_REGION=⟪region⟫\nRELEASE=⟪sha⟫\n",
        '{"customer": "⟪cus⟫", "config": {"stripe": "⟪token⟫"}, "idempotency": "⟪uuid⟫"}',
    )
    customer = {"cus": "cus_" + _tok(rng, _ALNUM, 14)}
    return _token_case("stripe", rng, i, token, templates, lookalikes=customer)


@_kind("openai")
def _openai_kind(rng: random.Random, i: int) -> Case:
    """OpenAI keys: legacy sk-…T3BlbkFJ…, project sk-proj-…, service-account sk-svcacct-…."""
    token = _openai(rng, i)
    templates = (
        "OPENAI_API_KEY=⟪token⟫\nOPENAI_MODEL=gpt-4o-mini-2024-07-18\nDEPLOY=⟪sha⟫\n",
        'client = OpenAI(api_key="⟪token⟫")\n# last completion ⟪completion⟫\n',
        "openai.AuthenticationError: Error code: 401 - {'error': {'message': 'Incorrect API key "
        "provided: ⟪token⟫.', 'type': 'invalid_request_error'}} request_id=⟪uuid⟫",
        "⟪ts⟫ DEBUG completion ⟪completion⟫ used key ⟪token⟫ (trace ⟪trace⟫)",
    )
    completion = {"completion": "chatcmpl-" + _tok(rng, _ALNUM, 29)}
    return _token_case("openai", rng, i, token, templates, lookalikes=completion)


@_kind("anthropic")
def _anthropic_kind(rng: random.Random, i: int) -> Case:
    """Anthropic keys: sk-ant-api03-… and sk-ant-admin01-…."""
    token = _anthropic(rng, i)
    templates = (
        "ANTHROPIC_API_KEY=⟪token⟫\nMODEL=claude-sonnet-4-20250514\nRELEASE_SHA=⟪sha⟫\n",
        "> POST /v1/messages HTTP/1.1\n> x-api-key: ⟪token⟫\n> anthropic-version: 2023-06-01\n"
        '< HTTP/1.1 200 OK\n{"id": "⟪msg⟫", "type": "message"}',
        'client = anthropic.Anthropic(api_key="⟪token⟫")  # ⟪msg⟫',
    )
    msg = {"msg": "msg_01" + _tok(rng, _ALNUM, 22)}
    return _token_case("anthropic", rng, i, token, templates, lookalikes=msg)


@_kind("google_api_key")
def _google_api_key(rng: random.Random, i: int) -> Case:
    """Google API keys (AIza + 35) in Maps URLs, Firebase config, env files and JSON."""
    token = _google_key(rng)
    if i % 5 == 4:
        project = f"acme-mobile-{rng.randint(1000, 9999)}"
        payload = {
            "project_info": {
                "project_id": project,
                "project_number": str(rng.randint(10**11, 10**12)),
            },
            "client": [{"api_key": [{"current_key": token}], "services": {}}],
        }
        return Case("google_api_key", payload, (token,), (project,))
    return _token_case(
        "google_api_key",
        rng,
        i,
        token,
        (
            "GET https://maps.googleapis.com/maps/api/geocode/json?address=Main+St&key=⟪token⟫ 200 "
            "⟪ms⟫ms req=⟪uuid⟫",
            "const firebaseConfig = "
            '{\n  apiKey: "⟪token⟫",\n  authDomain: "acme-app.firebaseapp.com",\n'
            '  appId: "1:⟪n⟫:web:⟪span⟫"\n};\n',
            "GOOGLE_API_KEY=⟪token⟫\nGEMINI_MODEL=gemini-1.5-pro\nBUILD_ID=⟪uuid⟫\n",
        ),
    )


@_kind("google_service_account")
def _google_service_account(rng: random.Random, i: int) -> Case:
    """A service-account JSON's PEM private key, as a file's text or as a parsed value."""
    project = f"acme-{rng.choice(_WORDS)}-{rng.randint(100000, 999999)}"
    body = _pem_body(rng, _PRIVATE_PEMS[1][1], _PRIVATE_PEMS[1][2])
    pem = _pem("PRIVATE KEY", body) + "\n"
    doc = {
        "type": "service_account",
        "project_id": project,
        "private_key_id": _hex(rng, 40),
        "private_key": pem,
        "client_email": f"etl@{project}.iam.gserviceaccount.com",
        "client_id": str(rng.randint(10**20, 10**21 - 1)),
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
        "universe_domain": "googleapis.com",
    }
    if i % 2:
        return Case("google_service_account", doc, ("\n".join(body),), (project,))
    text = json.dumps(doc, indent=2)
    if i % 4 == 2:
        text = f"$ cat ~/keys/{project}.json\n{text}\n$ gcloud auth activate-service-account"
    return Case("google_service_account", text, ("\\n".join(body),), (project,))


def _azure_connection_string(rng: random.Random, i: int) -> tuple[str, str]:
    """A connection string template holding `⟪secret⟫`, and that secret (an account or SAS key)."""
    account_key, sas_key = _b64(rng.randbytes(64)), _b64(rng.randbytes(32))
    name = "acme" + rng.choice(_WORDS) + str(rng.randint(10, 99))
    options = (
        (
            f"DefaultEndpointsProtocol=https;AccountName={name};AccountKey=⟪secret⟫;"
            "EndpointSuffix=core.windows.net",
            account_key,
        ),
        (
            f"Endpoint=sb://{name}.servicebus.windows.net/;SharedAccessKeyName="
            "RootManageSharedAccessKey;SharedAccessKey=⟪secret⟫;EntityPath=orders",
            sas_key,
        ),
        (
            f"HostName={name}.azure-devices.net;SharedAccessKeyName=iothubowner;"
            "SharedAccessKey=⟪secret⟫",
            sas_key,
        ),
        (
            f"AccountEndpoint=https://{name}.documents.azure.com:443/;AccountKey=⟪secret⟫;",
            account_key,
        ),
    )
    return options[i % len(options)]


@_kind("azure")
def _azure(rng: random.Random, i: int) -> Case:
    """Azure connection strings: `AccountKey=` (Storage, Cosmos), `SharedAccessKey=` (Bus, IoT)."""
    cs, secret = _azure_connection_string(rng, i)
    if i % 5 == 4:
        run = _uuid(rng)
        values = {"AzureWebJobsStorage": cs.replace("⟪secret⟫", secret), "RUN_ID": run}
        payload = {"IsEncrypted": False, "Values": values}
        return Case("azure", payload, (secret,), (run,))
    templates = (
        '{\n  "ConnectionStrings": {\n    "Default": "⟪cs⟫"\n  },\n  "InstanceId": "⟪uuid⟫"\n}',
        'AZURE_STORAGE_CONNECTION_STRING="⟪cs⟫"\nBUILD_SHA=⟪sha⟫\n',
        "⟪ts⟫ INFO  ServiceBusClient created from '⟪cs⟫' (operation ⟪uuid⟫)",
        'az storage blob list --connection-string "⟪cs⟫" --container-name logs  # ⟪trace⟫',
    )
    tpl = _pick(rng, templates, i)
    return _text_case("azure", rng, tpl, {"secret": secret}, values={"cs": cs})


@_kind("twilio")
def _twilio(rng: random.Random, i: int) -> Case:
    """Twilio account SIDs (AC…), API key SIDs (SK…) and the auth token or API secret with them."""
    account, api_key = "AC" + _hex(rng, 32), "SK" + _hex(rng, 32)
    auth_token, api_secret = _hex(rng, 32), _tok(rng, _ALNUM, 32)
    tpl = _pick(
        rng,
        (
            "TWILIO_ACCOUNT_SID=⟪ac⟫\nTWILIO_AUTH_TOKEN=⟪at⟫\nDEPLOY_ID=⟪uuid⟫\n",
            "from twilio.rest import Client\n"
            'client = Client("⟪ac⟫", "⟪at⟫")  # build ⟪short_sha⟫\n',
            "curl -X POST https://api.twilio.com/2010-04-01/Accounts/⟪ac⟫/Messages.json "
            "-u ⟪ac⟫:⟪at⟫ --data-urlencode 'Body=deploy ⟪sha⟫ done'",
            '{"account_sid": "⟪ac⟫", "api_key": "⟪sk⟫", "api_secret": "⟪as⟫", "request": "⟪uuid⟫"}',
            "TWILIO_API_KEY=⟪sk⟫\nTWILIO_API_SECRET=⟪as⟫\nTWILIO_ACCOUNT_SID=⟪ac⟫\n"
            "DEPLOY_SHA=⟪sha⟫\n",
        ),
        i,
    )
    secrets = {"ac": account, "sk": api_key, "at": auth_token, "as": api_secret}
    return _text_case("twilio", rng, tpl, secrets)


@_kind("sendgrid")
def _sendgrid(rng: random.Random, i: int) -> Case:
    """SendGrid API keys (SG.<22>.<43>)."""
    token = "SG." + _tok(rng, _B64URL, 22) + "." + _tok(rng, _B64URL, 43)
    return _token_case(
        "sendgrid",
        rng,
        i,
        token,
        (
            "SENDGRID_API_KEY=⟪token⟫\nMAIL_FROM_NAME=Acme Billing\nMAIL_BATCH_ID=⟪uuid⟫\n",
            'sg = SendGridAPIClient("⟪token⟫")  # message batch ⟪uuid⟫',
            "smtp:\n  host: smtp.sendgrid.net\n  user: apikey\n  pass: ⟪token⟫\n  trace: ⟪trace⟫\n",
        ),
    )


@_kind("npm")
def _npm(rng: random.Random, i: int) -> Case:
    """npm automation/publish tokens (npm_ + 36)."""
    token = "npm_" + _tok(rng, _ALNUM, 36)
    templates = (
        "//registry.npmjs.org/:_authToken=⟪token⟫\n@acme:registry=https://npm.pkg.github.com\n"
        "; synced from ⟪sha⟫\n",
        'npmAuthToken: ⟪token⟫\nnpmRegistryServer: "https://registry.npmjs.org"\n'
        "# cache key ⟪uuid⟫\n",
        "npm notice Publishing to https://registry.npmjs.org/ with tag latest\n"
        "npm notice integrity: ⟪integrity⟫\nNPM_TOKEN=⟪token⟫\n",
    )
    integrity = {"integrity": "sha512-" + _clean_b64(rng, b"", 64)}
    return _token_case("npm", rng, i, token, templates, lookalikes=integrity)


@_kind("pypi")
def _pypi_kind(rng: random.Random, i: int) -> Case:
    """PyPI API tokens (pypi-AgEIcHlwaS5vcmc… macaroons)."""
    token = _pypi(rng)
    return _token_case(
        "pypi",
        rng,
        i,
        token,
        (
            "[pypi]\n  username = __token__\n  password = ⟪token⟫\n# written by job ⟪uuid⟫\n",
            "$ uv publish --token ⟪token⟫ dist/*\n"
            "Uploading acme_sdk-⟪ver⟫-py3-none-any.whl (⟪digest⟫)\n",
            "TWINE_USERNAME=__token__\nTWINE_PASSWORD=⟪token⟫\nGITHUB_SHA=⟪sha⟫\n",
            "$ poetry config pypi-token.pypi ⟪token⟫\n$ poetry publish --build  # ⟪sha⟫\n",
        ),
    )


@_kind("huggingface")
def _huggingface(rng: random.Random, i: int) -> Case:
    """Hugging Face user access tokens (hf_ + 34 letters)."""
    token = "hf_" + _tok(rng, string.ascii_letters, 34)
    templates = (
        "$ huggingface-cli login --token ⟪token⟫\nToken is valid (permission: write).\n"
        "⟪transfer⟫\n",
        "HF_TOKEN=⟪token⟫\nMODEL_REVISION=⟪sha⟫\n",
        'from huggingface_hub import login\nlogin(token="⟪token⟫")\n'
        'snapshot_download("acme/intent-classifier", revision="⟪sha⟫")\n',
        "git clone https://user:⟪token⟫@huggingface.co/acme/intent-classifier  # ⟪short_sha⟫",
    )
    transfer = {"transfer": "HF_HUB_ENABLE_HF_TRANSFER=1"}
    return _token_case("huggingface", rng, i, token, templates, lookalikes=transfer)


@_kind("datadog")
def _datadog(rng: random.Random, i: int) -> Case:
    """Datadog API (32 hex) and application (40 hex) keys beside DD_API_KEY / DD_APP_KEY."""
    api, app = _hex(rng, 32), _hex(rng, 40)
    tpl = _pick(
        rng,
        (
            "DD_API_KEY=⟪api⟫\nDD_SITE=datadoghq.eu\nDD_VERSION=⟪sha⟫\n",
            "DD_API_KEY=⟪api⟫\nDD_APP_KEY=⟪app⟫\nDD_ENV=prod\nDD_VERSION=⟪sha⟫\n",
            "docker run -d -e DD_API_KEY=⟪api⟫ -e DD_ENV=prod gcr.io/datadoghq/agent:7  # ⟪sha⟫",
            "datadog:\n  apiKey: ⟪api⟫\n  appKey: ⟪app⟫\n  clusterName: prod-⟪region⟫\n"
            "  tags:\n    - git.commit.sha:⟪sha⟫\n",
            'curl -X GET https://api.datadoghq.com/api/v1/monitor -H "DD-API-KEY: ⟪api⟫" '
            '-H "DD-APPLICATION-KEY: ⟪app⟫"  # ⟪uuid⟫',
            "# datadog.yaml\napi_key: ⟪api⟫\nsite: datadoghq.com\nhostname: ⟪host⟫\n"
            "tags:\n  - git.commit.sha:⟪sha⟫\n",
        ),
        i,
    )
    return _text_case("datadog", rng, tpl, {"api": api, "app": app})
