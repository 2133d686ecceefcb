// Rendering for the chat page (loaded before app.js): DOM helpers, and an answer with its sources
// and their evidence, the possibly related sources, or the not-found state. Every piece of text
// from the server or a document goes into the page as a text node, never as markup, so a document
// cannot inject anything.
"use strict";

const RULES = {
  vector: "blízký význam (vektor)",
  words: "vzácná slova z otázky",
  support: "význam podpořený slovy otázky",
  topic: "blízký význam k tématu korpusu",
  paraphrase: "velmi blízký význam místo chybějících slov",
  document: "jiná část téhož dokumentu mluví o otázce, tato na ni odpovídá",
  anchors: "jména, čísla a kódy z otázky",
};
const ANSWER_TYPES = {
  number: "číslo", amount: "částka", date: "datum nebo čas", time: "čas", duration: "doba",
  person: "osoba nebo útvar", place: "místo", name: "jméno",
};
// Why a related source is not an answer (the answerability check that refused it).
const REFUSED = {
  focus: "v úryvku chybí slova, na která se otázka ptá",
  type: "v úryvku není, na co se otázka ptá (číslo, datum, osoba …)",
};
const MATCHED_BY = {
  lemma: "základní tvar",
  stem: "kmen",
  prefix: "začátek slova",
  derived: "odvozené slovo",
  family: "slovo téhož základu",
  spoken: "spisovné slovo",
  name: "tvar jména",
  range: "rozsah čísel",
  title: "název dokumentu",
  context: "jinde v úseku",
  time: "čas",
};
const DEGRADED = {
  vector: "Hledání podle významu nebylo k dispozici, odpověď stojí jen na shodě slov.",
  fts: "Hledání podle slov selhalo, odpověď stojí jen na významu.",
  llm: "Jazykový model neodpověděl, zobrazuji výňatek ze zdroje.",
  followup: "Doplňující otázku se nepodařilo přeformulovat jazykovým modelem.",
  "embedding-queue": "Některé nalezené úseky ještě nemají vektor (indexují se), posoudila je jen shoda slov.",
};

const DEGRADED_RELATED_LLM = "Jazykový model neodpověděl, zobrazuji jen možná související zdroje.";

// --- small DOM helpers ---------------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const $ = (id) => document.getElementById(id);

function number(value, digits) {
  return Number(value).toLocaleString("cs-CZ", { maximumFractionDigits: digits });
}

// --- rendering an answer -------------------------------------------------------------------------

function ruleText(rule) {
  if (!rule) return "neprošel filtrem";
  return rule.split("+").map((r) => RULES[r] || r).join(" + ");
}

function evidenceList(ev) {
  // a related source: a rule found it near the question, a check of the passage refused it
  const refused = ev.related && ev.answerability ? REFUSED[ev.answerability.reason] : null;
  const label = ev.related ? "Blízko otázce díky: " : "Přijat díky: ";
  const items = [el("li", {}, el("span", { class: "ev-label" }, label),
    el("strong", { class: "rule", "data-rule": ev.rule || "" }, ruleText(ev.rule)))];
  if (refused) {
    items.push(el("li", { class: "refused" },
      el("span", { class: "ev-label" }, "Neodpovídá přímo: "), refused));
  }
  if (ev.distance !== null && ev.distance !== undefined) {
    const margin = ev.margin ? ` (o ${number(ev.margin, 3)} dál než nejbližší)` : "";
    items.push(el("li", {}, el("span", { class: "ev-label" }, "Vzdálenost: "),
      `${number(ev.distance, 3)}${margin}`));
  }
  const ranks = [];
  if (ev.fts_rank) ranks.push(`podle slov ${ev.fts_rank}.`);
  if (ev.vector_rank) ranks.push(`podle významu ${ev.vector_rank}.`);
  if (ranks.length) {
    items.push(el("li", {}, el("span", { class: "ev-label" }, "Pořadí: "), ranks.join(", ")));
  }
  const words = ev.words || [];
  if (words.length) {
    const chips = words.map((w) => {
      const how = w.matched_by ? MATCHED_BY[w.matched_by] || w.matched_by : "nenalezeno";
      const rare = w.rare ? ", vzácné" : "";
      return el("li", { class: w.matched_by ? "word matched" : "word missing" },
        w.word, el("span", { class: "word-how" }, ` (${how}${rare})`));
    });
    items.push(el("li", {}, el("span", { class: "ev-label" }, "Slova otázky: "),
      el("ul", { class: "words" }, chips)));
  }
  if (ev.coverage !== undefined) {
    items.push(el("li", {}, el("span", { class: "ev-label" }, "Pokrytí otázky: "),
      `${number(ev.coverage * 100, 0)} %`));
  }
  const a = ev.answerability;
  if (a) {
    if (a.answer_type) {
      items.push(el("li", { class: "answer-type" }, el("span", { class: "ev-label" }, "Otázka chce: "),
        ANSWER_TYPES[a.answer_type] || a.answer_type,
        a.type_token ? el("span", { class: "word-how" }, ` (v textu: ${a.type_token})`) : null));
    }
    const needed = [...(a.required || []), ...(a.focus || [])];
    if (needed.length) {
      const chips = needed.map((w) => el("li", { class: w.matched_by ? "word matched" : "word missing" },
        w.word, el("span", { class: "word-how" },
          ` (${w.matched_by ? MATCHED_BY[w.matched_by] || w.matched_by : "nenalezeno"})`)));
      items.push(el("li", {}, el("span", { class: "ev-label" }, "Musí být v úryvku: "),
        el("ul", { class: "words" }, chips)));
    }
  }
  return el("ul", { class: "evidence" }, items);
}

// The source's text with its evidence window marked. Offsets count code points (Python's str),
// so the text is sliced as an array of code points, not of UTF-16 units.
function sourceText(text, evidence) {
  const window = evidence && evidence.answerability && evidence.answerability.window;
  if (!window) return el("blockquote", {}, text);
  const chars = Array.from(text);
  const [start, end] = window;
  return el("blockquote", {}, chars.slice(0, start).join(""),
    el("mark", { class: "window" }, chars.slice(start, end).join("")),
    chars.slice(end).join(""));
}

function sourceList(sources, citations) {
  const cited = new Set(citations || []);
  return el("ol", { class: "sources", "aria-label": "Zdroje" }, sources.map((s, i) => {
    const n = i + 1;
    return el("li", { class: "source", "data-source-id": s.source_id },
      el("p", { class: "source-head" },
        el("span", { class: "source-number" }, `[${n}]`), " ",
        el("span", { class: "source-title" }, s.title || s.source_id), " ",
        el("code", { class: "source-id" }, s.source_id),
        cited.has(n) ? el("span", { class: "badge cited" }, "citováno") : null),
      evidenceList(s.evidence || {}),
      el("details", { class: "source-text" },
        el("summary", {}, "Text zdroje"),
        sourceText(s.text, s.evidence)));
  }));
}

function relatedSources(sources) {
  return [el("h3", { class: "sources-title" }, "Možná souvisí"), sourceList(sources, [])];
}

function notFoundBox(sentence, decidedBy) {
  // decidedBy "llm": documents on the topic were found, but the model found no answer in them
  const why = decidedBy === "llm"
    ? el("p", { class: "not-found-why" },
      "Dokumenty o tomto tématu se našly, ale jazykový model v nich odpověď nenašel.")
    : null;
  return el("div", { class: "not-found", role: "note" },
    el("p", { class: "not-found-title" }, "Nenalezeno ve znalostní bázi"),
    el("p", {}, "Žádný z dokumentů na tuto otázku neodpovídá, a tak služba nic nevymýšlí. "
      + "Zkuste otázku položit jinými slovy, nebo nahrajte dokument, který odpověď obsahuje."),
    why,
    sentence ? el("p", { class: "service-sentence" }, "Odpověď služby: ", el("q", {}, sentence)) : null);
}

// A related answer: no passage answers the question directly, and the nearest sources are
// listed as possibly related. Nothing in it looks like an answer, unless a chat model answered from
// those sources alone (`asserted`), and then its text is marked as uncertain.
function relatedBox(answer) {
  const written = answer && answer.asserted
    ? el("div", { class: "related-answer" },
      el("p", { class: "badge uncertain" }, "Nejistá odpověď jazykového modelu z těchto zdrojů"),
      el("p", { class: "answer-text" }, answer.answer))
    : null;
  return el("div", { class: "related", role: "note" },
    el("p", { class: "related-title" }, "Přímá odpověď nenalezena"),
    el("p", {}, "Žádný úryvek na otázku přímo neodpovídá. Níže jsou nejbližší zdroje; "
      + "odpověď v nich může být řečena jinými slovy, nebo v nich není."),
    written);
}

function degradedNotes(degraded, related) {
  if (!degraded || !degraded.length) return null;
  // a related answer has no excerpt to fall back on: only its sources are shown
  const note = (d) => (related && d.component === "llm"
    ? DEGRADED_RELATED_LLM : DEGRADED[d.component]);
  return el("ul", { class: "degraded", "aria-label": "Omezení" }, degraded.map((d) =>
    el("li", {}, note(d) || `${d.component}: ${d.message || d.reason}`)));
}

// One question and its reply in the conversation.
class Turn {
  constructor(question) {
    const fragment = $("turn-template").content.cloneNode(true);
    this.node = fragment.querySelector(".turn");
    this.node.querySelector(".question-text").textContent = question;
    this.reply = this.node.querySelector(".reply");
    $("conversation").append(this.node);
    this.status = "pending";
    this.text = null;
    this.final = null;
    this.scroll();
  }

  scroll() {
    this.node.scrollIntoView({ block: "end", behavior: "smooth" });
  }

  setStatus(status) {
    this.status = status;
    this.reply.dataset.status = status;
  }

  onSources(view) {
    this.reply.replaceChildren();
    if (view.status === "not_found") {
      this.setStatus("not_found");
      this.reply.append(notFoundBox(null));
      return;
    }
    if (view.status === "related") {
      // the answer event says whether a chat model wrote anything from these sources
      this.setStatus("related");
      this.reply.append(relatedBox(null), ...relatedSources(view.sources));
      return;
    }
    this.setStatus("streaming");
    this.text = el("p", { class: "answer-text" });
    this.reply.append(
      el("div", { class: "answer" }, this.text),
      el("h3", { class: "sources-title" }, "Zdroje"),
      sourceList(view.sources, []));
  }

  onDelta(piece) {
    // not_found, related: the fixed sentence (or the model's uncertain text) comes with `answer`
    if (this.status !== "streaming") return;
    this.text.append(document.createTextNode(piece));
    this.scroll();
  }

  onAnswer(answer) {
    this.final = answer;
    this.reply.replaceChildren();
    if (answer.status === "not_found") {
      this.setStatus("not_found");
      this.reply.append(notFoundBox(answer.answer, answer.not_found_by),
        degradedNotes(answer.degraded) || "");
      return;
    }
    if (answer.status === "related") {
      this.setStatus("related");
      this.reply.append(relatedBox(answer), degradedNotes(answer.degraded, true) || "",
        ...relatedSources(answer.sources));
      this.scroll();
      return;
    }
    this.setStatus("answered");
    const label = answer.extractive
      ? el("p", { class: "badge extractive" }, "Výňatek ze zdroje, bez jazykového modelu")
      : null;
    this.reply.append(
      el("div", { class: "answer" }, label, el("p", { class: "answer-text" }, answer.answer)),
      degradedNotes(answer.degraded) || "",
      el("h3", { class: "sources-title" }, "Zdroje"),
      sourceList(answer.sources, answer.citations));
    this.scroll();
  }

  onError(message) {
    this.setStatus("error");
    this.reply.append(el("p", { class: "error", role: "alert" }, message));
  }
}
