// The operator page of `zeroclaw-obs serve` (docs/server.md): live tool cards of the running
// turns and the pending approvals, read from the operator stream GET /v1/events.
//
// - The token lives in one variable: never in storage or cookies, so a reload asks again.
// - fetch() and a stream reader, not EventSource (it cannot send the Authorization header);
//   the SSE framing is parsed here. The stream is read again with backoff whenever it ends; on
//   each connect the server replays the running turns and GET /v1/approvals lists what waits.
// - Every model-chosen string (tool names, arguments, outputs, messages) reaches the DOM as a
//   text node or an attribute value, never as HTML.
"use strict";
(() => {
  const MAX_TURNS = 100; // beyond this, ended turns are dropped, oldest first
  const MAX_BACKOFF_MS = 30000;
  const REFUSED = "The server refused this token.";

  let token = null;
  let session = 0; // bumped at each sign-in and sign-out: an older stream loop stops
  let controller = null; // aborts the open stream at sign-out
  const turns = new Map(); // turn_id -> {root, state, meta, message, cards, answer, calls}
  const approvals = new Map(); // approval_id -> its card
  const decided = new Set(); // approval ids already decided: a replay never shows them again

  const $ = (id) => document.getElementById(id);

  /** An element; strings among `children` become text nodes (Element.append). */
  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (value != null) node.setAttribute(name, String(value));
    }
    node.append(...children);
    return node;
  }

  /** A value as the operator reads it: strings whole and as they are, the rest as JSON. */
  const shown = (value) =>
    typeof value === "string" ? value : (JSON.stringify(value, null, 2) ?? "");

  function setStatus(state, text) {
    $("status").dataset.state = state;
    $("status").textContent = text;
  }

  function api(path, options = {}) {
    const headers = { ...options.headers, Authorization: `Bearer ${token}` };
    return fetch(path, { ...options, headers, cache: "no-store", credentials: "omit" });
  }

  // --- sign-in and the stream ------------------------------------------------------------

  $("login").addEventListener("submit", (event) => {
    event.preventDefault();
    token = $("token").value.trim();
    $("token").value = "";
    $("login-error").textContent = "";
    clearAll();
    follow(++session);
  });

  function signOut() {
    session += 1;
    controller?.abort();
    token = null;
    clearAll();
    setStatus("unauthorized", "token refused");
    $("live").hidden = true;
    $("login").hidden = false;
    $("login-error").textContent = REFUSED;
    $("token").focus();
  }

  /** Reads the operator stream until sign-out, connecting again with backoff when it ends. */
  async function follow(mine) {
    for (let delay = 1000; mine === session; delay = Math.min(delay * 2, MAX_BACKOFF_MS)) {
      setStatus("connecting", "connecting…");
      try {
        controller = new AbortController();
        const response = await api("v1/events", { signal: controller.signal });
        if (response.status === 401) return signOut();
        if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
        delay = 1000;
        connected();
        await readEvents(response.body, mine);
      } catch {
        // refused, or the stream broke: try again below
      }
      if (mine !== session) return;
      setStatus("reconnecting", `disconnected; retrying in ${delay / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  function connected() {
    setStatus("connected", "connected");
    $("login").hidden = true;
    $("live").hidden = false;
    // The replay and the list rebuild the pending approvals from scratch.
    for (const id of [...approvals.keys()]) removeApproval(id);
    loadApprovals().catch(() => {});
    refreshEndedTurns().catch(() => {});
  }

  /** Parses Server-Sent Events: the `data:` lines up to a blank line are one event. */
  async function readEvents(body, mine) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    let data = [];
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || mine !== session) return;
        const lines = (buffer + value).split(/\r\n|\r|\n/);
        buffer = lines.pop();
        for (const line of lines) {
          if (line === "" && data.length) dispatch(data.join("\n"));
          if (line === "") data = [];
          else if (line.startsWith("data:")) data.push(line.slice(line[5] === " " ? 6 : 5));
          // `id:`, `event:`, `retry:` and `: ping` lines carry nothing this page uses
        }
      }
    } finally {
      reader.cancel().catch(() => {});
    }
  }

  function dispatch(text) {
    try {
      const event = JSON.parse(text);
      handlers[event.type]?.(event);
    } catch (error) {
      console.error("an event could not be shown", error); // the stream goes on
    }
  }

  const handlers = {
    turn_start: startTurn,
    tool_call: openCard,
    tool_progress: progressCard,
    tool_result: closeCard,
    chunk: (e) => turnOf(e.turn_id).answer.append(e.text ?? ""),
    approval_request: addApproval,
    approval_decided: (e) => removeApproval(e.approval_id, true),
    turn_end: endTurn,
  };

  async function loadApprovals() {
    const response = await api("v1/approvals");
    if (response.status === 401) return signOut();
    if (response.ok) for (const approval of await response.json()) addApproval(approval);
  }

  /** Closes the turns shown as running that ended while the stream was away. */
  async function refreshEndedTurns() {
    for (const [turnId, turn] of turns) {
      if (!turn.root.classList.contains("running")) continue;
      const response = await api(`v1/turns/${encodeURIComponent(turnId)}`);
      const status = response.ok ? await response.json() : null;
      if (response.status === 404) endTurn({ turn_id: turnId, outcome: "unknown" });
      else if (status?.status === "done") endTurn({ ...status, turn_id: turnId });
    }
  }

  function clearAll() {
    [turns, approvals, decided].forEach((known) => known.clear());
    [$("turns"), $("approvals")].forEach((list) => list.replaceChildren());
    $("no-approvals").hidden = false;
  }

  // --- turns and their tool cards ----------------------------------------------------------

  /** The turn's section, made at its first event; the newest turn is on top. */
  function turnOf(turnId) {
    if (turns.has(turnId)) return turns.get(turnId);
    const turn = {
      state: el("span", { class: "turn-state" }, "running"),
      meta: el("span", { class: "meta" }, `turn ${turnId}`),
      message: el("pre", { class: "message" }),
      cards: el("div", { class: "cards" }),
      answer: el("pre", { class: "answer" }),
      calls: new Map(), // call id -> its card
    };
    turn.root = el("section", { class: "turn running", "data-turn-id": turnId },
      el("div", { class: "row" }, turn.state, turn.meta), turn.message, turn.cards, turn.answer);
    turns.set(turnId, turn);
    $("turns").prepend(turn.root);
    for (const [id, old] of turns) {
      if (turns.size <= MAX_TURNS) break;
      if (old.root.classList.contains("running")) continue;
      old.root.remove();
      turns.delete(id);
    }
    return turn;
  }

  /** A turn (re)starts: after a reconnect its replay rebuilds the cards from the start. */
  function startTurn(e) {
    const turn = turnOf(e.turn_id);
    turn.calls.clear();
    turn.cards.replaceChildren();
    turn.answer.textContent = "";
    turn.meta.textContent = `turn ${e.turn_id} · conversation ${e.conversation_id}`;
    turn.message.textContent = e.message ?? "";
  }

  /** A pending card (tool name and arguments); a repeated call id after a result gets a new one. */
  function openCard(e) {
    const turn = turnOf(e.turn_id);
    let card = turn.calls.get(e.id);
    if (!card?.classList.contains("pending")) {
      const key = { "data-turn-id": e.turn_id, "data-call-id": e.id };
      card = el("article", { class: "card pending", ...key },
        el("div", { class: "row" },
          el("span", { class: "tool-name" }), el("span", { class: "card-state" }, "running…")),
        el("pre", { class: "arguments" }), el("pre", { class: "output" }));
      turn.calls.set(e.id, card);
      turn.cards.append(card);
    }
    card.setAttribute("aria-label", `tool call ${e.name ?? ""}`);
    card.querySelector(".tool-name").textContent = e.name ?? "";
    const args = card.querySelector(".arguments");
    if (e.arguments !== undefined) args.textContent = shown(e.arguments);
    return card;
  }

  function progressCard(e) {
    const card = turnOf(e.turn_id).calls.get(e.id);
    const total = e.total == null ? "" : `/${e.total}`;
    const text = `running… ${e.progress}${total} ${e.message ?? ""}`;
    if (card?.classList.contains("pending")) card.querySelector(".card-state").textContent = text;
  }

  function closeCard(e) {
    const card = openCard(e);
    const outcome = e.outcome ?? (e.success ? "success" : "error");
    card.classList.replace("pending", "done");
    card.classList.add(e.success ? "success" : "failure");
    card.dataset.outcome = outcome;
    card.querySelector(".card-state").textContent = e.success ? "succeeded" : `failed (${outcome})`;
    card.querySelector(".output").textContent = shown(e.output ?? "");
  }

  function endTurn(e) {
    const turn = turnOf(e.turn_id);
    turn.root.classList.replace("running", "ended");
    turn.root.dataset.outcome = e.outcome;
    turn.state.textContent = `done: ${e.outcome}`;
    turn.answer.textContent = e.text ?? "";
    for (const [id, card] of approvals) if (card.dataset.turnId === e.turn_id) removeApproval(id);
  }

  // --- approvals ----------------------------------------------------------------------------

  const DECISIONS = [
    ["yes", "Yes", "Allow this call once"],
    ["no", "No", "Deny this call"],
    ["always", "Always", "Allow this tool for the rest of this conversation"],
    ["replace", "Edit", "Deny this call and give the model the replacement text as its result"],
  ];

  /** The arguments in display order, the deciding (`primary`) ones first, each value whole. */
  function argumentList(args = {}, primary = []) {
    const first = [primary].flat().filter((name) => Object.hasOwn(args, name));
    const list = el("dl", { class: "arguments" });
    for (const name of new Set([...first, ...Object.keys(args)])) {
      list.append(el("dt", {}, name),
        el("dd", { class: "value", "data-argument": name }, shown(args[name])));
    }
    return list;
  }

  function addApproval(a) {
    if (approvals.has(a.approval_id) || decided.has(a.approval_id)) return;
    const reply = el("textarea", { class: "replace-with" });
    const error = el("span", { class: "error", role: "alert" });
    const buttons = DECISIONS.map(([decision, label, description]) =>
      el("button", { type: "button", "data-decision": decision, title: description }, label));
    const card = el("article", {
      class: "approval", "data-approval-id": a.approval_id, "data-turn-id": a.turn_id,
      "aria-label": `approval for ${a.tool}`,
    },
      el("div", { class: "row" },
        el("span", { class: "tool-name" }, a.tool ?? ""),
        a.server ? el("span", { class: "server" }, `MCP server ${a.server}`) : "",
        a.agent ? el("span", { class: "subagent" }, `sub-agent ${a.agent}`) : "",
        el("span", { class: "meta" }, `turn ${a.turn_id} · asked ${a.requested_at}`)),
      argumentList(a.arguments ?? undefined, a.primary ?? undefined),
      Object.keys(a.annotations ?? {}).length
        ? el("pre", { class: "annotations meta" }, shown(a.annotations)) : "",
      el("label", {}, "Replacement result (for Edit)", reply),
      el("div", { class: "row" }, ...buttons, error));
    for (const button of buttons) {
      button.addEventListener("click", () => decide(card, button.dataset.decision, reply, error));
    }
    approvals.set(a.approval_id, card);
    $("approvals").append(card);
    $("no-approvals").hidden = true;
  }

  function removeApproval(id, isDecided = false) {
    if (isDecided) decided.add(id);
    approvals.get(id)?.remove();
    approvals.delete(id);
    $("no-approvals").hidden = approvals.size > 0;
  }

  async function decide(card, decision, reply, error) {
    const id = card.dataset.approvalId;
    const body = { decision };
    if (decision === "replace" && !reply.value) {
      error.textContent = "Write the replacement result first.";
      return reply.focus();
    }
    if (decision === "replace") body.replace_with = reply.value;
    const operator = $("operator").value.trim();
    if (operator) body.operator = operator;
    const enable = (on) => card.querySelectorAll("button").forEach((b) => (b.disabled = !on));
    enable(false);
    error.textContent = "";
    try {
      const headers = { "Content-Type": "application/json" };
      const url = `v1/approvals/${encodeURIComponent(id)}`;
      const response = await api(url, { method: "POST", headers, body: JSON.stringify(body) });
      if (response.status === 401) return signOut();
      // 404: decided elsewhere, timed out or its turn ended; it waits no more either way.
      if (response.ok || response.status === 404) return removeApproval(id, true);
      error.textContent = `Not sent (HTTP ${response.status}).`;
    } catch {
      error.textContent = "Not sent: the server could not be reached.";
    }
    enable(true);
  }
})();
