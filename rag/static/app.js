// The chat page: asks POST v1/ask with stream: true and renders its server-sent events
// (sources, delta..., answer, error) with render.js; uploads files to POST v1/documents.
// Every piece of text from the server or a document goes into the page as a text node, never as
// markup, so a document cannot inject anything into the page.
"use strict";

const KEY_STORAGE = "rag.apiKey";
const MAX_HISTORY = 10; // earlier messages sent along (the service accepts up to max_history)

const DOC_STATUS = { added: "přidán", replaced: "nahrazen", unchanged: "beze změny" };

const history = [];
let running = null; // the AbortController of the answer being streamed

// --- the API key ---------------------------------------------------------------------------------

function storedKey() {
  try {
    return localStorage.getItem(KEY_STORAGE) || "";
  } catch {
    return ""; // storage disabled (private mode, policy): no key
  }
}

function storeKey(key) {
  try {
    if (key) localStorage.setItem(KEY_STORAGE, key);
    else localStorage.removeItem(KEY_STORAGE);
    return true;
  } catch {
    return false;
  }
}

function authHeaders(extra) {
  const key = storedKey();
  return key ? { ...extra, Authorization: `Bearer ${key}` } : { ...extra };
}

// --- errors --------------------------------------------------------------------------------------

// The problem details of a failed response, or a stand-in when the body is not one.
async function problemOf(response) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (body && typeof body === "object") {
    return { status: response.status, title: body.title || "", detail: body.detail || "", kind: body.kind || "" };
  }
  return { status: response.status, title: response.statusText || "Chyba", detail: "", kind: "" };
}

function problemMessage(p) {
  if (p.status === 401) return "Služba vyžaduje platný API klíč. Zadejte ho v části „API klíč“.";
  if (p.status === 503) return "Služba je dočasně nedostupná (databáze nebo model). Zkuste to za chvíli znovu.";
  if (p.status === 413) return "Soubor nebo požadavek je příliš velký.";
  if (p.status === 415) return "Tento typ souboru služba neumí přečíst.";
  const text = [p.title, p.detail].filter(Boolean).join(": ");
  return text ? `Chyba ${p.status}: ${text}` : `Chyba ${p.status}`;
}

function showKeyPrompt() {
  $("api-key").focus();
}

// --- server-sent events over fetch ---------------------------------------------------------------

// Yields {event, data} from a text/event-stream body as the bytes arrive.
async function* readEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const lineBreak = /\r\n|\r|\n/;
  let buffer = "";
  let event = "message";
  let data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (value) buffer += value;
    for (;;) {
      const m = lineBreak.exec(buffer);
      if (!m) break;
      // A lone "\r" at the end may be the first half of "\r\n": wait for the next piece.
      if (m[0] === "\r" && m.index === buffer.length - 1 && !done) break;
      const line = buffer.slice(0, m.index);
      buffer = buffer.slice(m.index + m[0].length);
      if (line === "") {
        if (data.length) yield { event, data: data.join("\n") };
        event = "message";
        data = [];
      } else if (!line.startsWith(":")) {
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let val = colon < 0 ? "" : line.slice(colon + 1);
        if (val.startsWith(" ")) val = val.slice(1);
        if (field === "event") event = val;
        else if (field === "data") data.push(val);
      }
    }
    if (done) break;
  }
  if (data.length) yield { event, data: data.join("\n") };
}

// --- asking --------------------------------------------------------------------------------------

async function ask(question) {
  const turn = new Turn(question);
  const conversation = $("conversation");
  const controller = new AbortController();
  running = controller;
  setAsking(true);
  conversation.setAttribute("aria-busy", "true");
  try {
    const response = await fetch("v1/ask", {
      method: "POST",
      headers: authHeaders({ "Content-Type": "application/json", Accept: "text/event-stream" }),
      body: JSON.stringify({ question, history: history.slice(-MAX_HISTORY), stream: true }),
      signal: controller.signal,
    });
    if (!response.ok) {
      const p = await problemOf(response);
      turn.reply.replaceChildren();
      turn.onError(problemMessage(p));
      if (p.status === 401) showKeyPrompt();
      return;
    }
    for await (const { event, data } of readEvents(response.body)) {
      const value = JSON.parse(data);
      if (event === "sources") turn.onSources(value);
      else if (event === "delta") turn.onDelta(value.text);
      else if (event === "answer") turn.onAnswer(value);
      else if (event === "error") turn.onError(problemMessage(value));
    }
    if (!turn.final && turn.status !== "error") {
      turn.onError("Spojení se přerušilo dřív, než přišla celá odpověď.");
    }
  } catch (e) {
    if (e.name === "AbortError") turn.onError("Zastaveno.");
    else turn.onError(`Službu se nepodařilo zastihnout: ${e.message}`);
  } finally {
    running = null;
    conversation.setAttribute("aria-busy", "false");
    setAsking(false);
  }
  if (turn.final) {
    history.push({ role: "user", content: question }, { role: "assistant", content: turn.final.answer });
  }
}

function setAsking(busy) {
  $("ask-button").disabled = busy;
  $("stop-button").hidden = !busy;
  $("ask-form").setAttribute("aria-busy", busy ? "true" : "false");
}

// --- uploading -----------------------------------------------------------------------------------

function uploadSummary(name, s) {
  const docs = (s.documents || []).map((d) =>
    el("li", {}, el("code", {}, d.source_id), ` – ${DOC_STATUS[d.status] || d.status}`,
      d.chunks !== undefined ? `, úseků: ${d.chunks}` : ""));
  const failures = (s.failures || []).map((f) =>
    el("li", { class: "error" }, f.origin ? `${f.origin}: ${f.error}` : f.error));
  const done = (s.added || 0) + (s.replaced || 0);
  const head = done
    ? `Nahráno: ${name}`
    : (s.unchanged ? `Beze změny: ${name} už ve znalostní bázi je.` : `Nenahráno: ${name}`);
  return [
    el("p", { class: done || s.unchanged ? "ok" : "error" }, head),
    docs.length ? el("ul", {}, docs) : null,
    failures.length ? el("ul", {}, failures) : null,
    s.unembedded
      ? el("p", { class: "degraded" }, `Úseků ve frontě na vektor: ${s.unembedded}; hned je najde `
        + "hledání podle slov, podle významu až po zaindexování (průběh ukazuje stránka nahoře).")
      : null,
  ];
}

async function upload(form) {
  const result = $("upload-result");
  const file = $("upload-file").files[0];
  if (!file) return;
  const body = new FormData();
  body.append("file", file, file.name);
  for (const [id, field] of [["upload-source-id", "source_id"], ["upload-title-input", "title"]]) {
    const value = $(id).value.trim();
    if (value) body.append(field, value);
  }
  $("upload-button").disabled = true;
  result.replaceChildren(el("p", {}, `Nahrávám ${file.name}…`));
  try {
    const response = await fetch("v1/documents", { method: "POST", headers: authHeaders(), body });
    if (!response.ok) {
      const p = await problemOf(response);
      result.replaceChildren(el("p", { class: "error", role: "alert" }, problemMessage(p)));
      if (p.status === 401) showKeyPrompt();
      return;
    }
    result.replaceChildren(...uploadSummary(file.name, await response.json()).filter(Boolean));
    form.reset();
    refreshStats();
  } catch (e) {
    result.replaceChildren(el("p", { class: "error", role: "alert" },
      `Nahrání se nepodařilo: ${e.message}`));
  } finally {
    $("upload-button").disabled = false;
  }
}

// --- the header line -----------------------------------------------------------------------------

// While chunks wait for vectors the line shows how many are indexed by meaning, refreshed until
// none waits.
const INDEXING_REFRESH_MS = 3000;
let statsTimer = null;

function indexingNote(e) {
  if (!e || !e.model || !e.waiting) return "";
  let note = `; podle významu zaindexováno ${number(e.embedded, 0)} z ${number(e.total, 0)} úseků`;
  if (e.error) note += ` (indexování vázne: ${e.error})`;
  else if (e.eta_seconds !== null && e.eta_seconds !== undefined) {
    note += e.eta_seconds < 90
      ? `, zbývá asi ${number(e.eta_seconds, 0)} s`
      : `, zbývá asi ${number(Math.ceil(e.eta_seconds / 60), 0)} min`;
  } else if (!e.workers) note += " (indexování neběží)";
  return note;
}

async function refreshStats() {
  const line = $("stats");
  clearTimeout(statsTimer);
  try {
    const response = await fetch("v1/stats", { headers: authHeaders() });
    if (!response.ok) {
      line.textContent = response.status === 401 ? "Pro přístup zadejte API klíč." : "";
      return;
    }
    const s = await response.json();
    line.textContent = `Ve znalostní bázi: dokumentů ${number(s.documents, 0)}, úseků ${number(s.chunks, 0)}`
      + indexingNote(s.embedding)
      + (s.llm ? `; odpovídá model ${s.llm}` : "; odpovědi jsou výňatky ze zdrojů");
    if (s.embedding && s.embedding.waiting) statsTimer = setTimeout(refreshStats, INDEXING_REFRESH_MS);
  } catch {
    line.textContent = "";
  }
}

// --- wiring --------------------------------------------------------------------------------------

function start() {
  const form = $("ask-form");
  const input = $("question");
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const question = input.value.trim();
    if (!question || running) return;
    $("empty-hint").hidden = true;
    input.value = "";
    ask(question);
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  $("stop-button").addEventListener("click", () => running && running.abort());
  $("new-chat").addEventListener("click", () => {
    history.length = 0;
    for (const turn of document.querySelectorAll("#conversation .turn")) turn.remove();
    $("empty-hint").hidden = false;
    input.focus();
  });

  $("upload-form").addEventListener("submit", (e) => {
    e.preventDefault();
    upload(e.currentTarget);
  });

  const keyInput = $("api-key");
  keyInput.value = storedKey();
  $("key-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const ok = storeKey(keyInput.value.trim());
    $("key-status").textContent = ok ? "Klíč uložen." : "Prohlížeč nedovolil klíč uložit.";
    refreshStats();
  });
  $("key-clear").addEventListener("click", () => {
    keyInput.value = "";
    storeKey("");
    $("key-status").textContent = "Klíč smazán.";
    refreshStats();
  });

  refreshStats();
  input.focus();
}

start();
