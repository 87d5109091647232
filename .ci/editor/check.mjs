// Checks the generated editor schemas with the real tools an editor uses:
//
//   1. Ajv 8 (strict mode, draft 2020-12) compiles every schema (the
//      fragment's, the spec's, the target file's and each target's
//      frontmatter) and validates the JSON fixtures.
//   2. yaml-language-server, driven headless over LSP (stdio), reports the
//      unknown property and the type error of a YAML override on the right
//      lines, a target's constraints (a pattern, a length) on a frontmatter
//      checked against that target's schema, and nothing on valid files.
//   3. Taplo (`taplo lint`) does the same for TOML overrides with a
//      `#:schema` directive.
//
// All three also see spec version 2's `$patch` directives: every form the
// spec accepts passes (directives-valid.*), and a misspelled verb in a
// keyed entry and in a metadata mapping, a `$patch` at the top level and a
// delete with company are each flagged where they are (directives-bad.*).
//
// Prints one PASS/FAIL line per check and a closing "N passed, N failed"
// line; exits 1 on any failure. No dependencies beyond package.json.

import { spawn, spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import Ajv2020 from "ajv/dist/2020.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "../..");
const FIXTURES = join(HERE, "fixtures");
const SCHEMAS = join(ROOT, "schemas");
const FRAGMENT_SCHEMA = join(SCHEMAS, "skill-fragment.schema.json");
const MERGESPEC_SCHEMA = join(SCHEMAS, "mergespec.schema.json");
const TARGET_SCHEMA = join(SCHEMAS, "target.schema.json");
const TARGETS = join(SCHEMAS, "targets");
// The standard's rules: a target's, checked on a frontmatter as export
// writes it (and as a person writes a skill for the standard by hand).
const STANDARD_SCHEMA = join(TARGETS, "agent-skills.schema.json");
const TIMEOUT_MS = 20_000;

const require = createRequire(import.meta.url);
const version = (pkg) => require(`${pkg}/package.json`).version;

let passed = 0;
let failed = 0;

/** Records one check: `problem` is null (pass) or a string saying what is wrong. */
function report(name, problem) {
  if (problem == null) {
    passed += 1;
    console.log(`PASS ${name}`);
  } else {
    failed += 1;
    console.log(`FAIL ${name}: ${problem}`);
  }
}

/** Runs `fn`; a thrown error is a failure of that check. */
async function check(name, fn) {
  try {
    report(name, (await fn()) ?? null);
  } catch (e) {
    report(name, e?.message ?? String(e));
  }
}

const readJson = (path) => JSON.parse(readFileSync(path, "utf8"));
const fixture = (name) => join(FIXTURES, name);
const lineOf = (text, prefix) => text.split("\n").findIndex((l) => l.startsWith(prefix));
/** The first line starting with `prefix` below the line starting with `anchor`; -1 if none. */
function lineAfter(text, anchor, prefix) {
  const lines = text.split("\n");
  const from = lines.findIndex((l) => l.startsWith(anchor));
  return from < 0 ? -1 : lines.findIndex((l, i) => i > from && l.startsWith(prefix));
}
const show = (x) => JSON.stringify(x);

// ---------------------------------------------------------------- Ajv ----

async function ajvChecks() {
  console.log(`\n-- Ajv ${version("ajv")} (strict, draft 2020-12)`);
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  let validate = null;

  await check("ajv: skill-fragment.schema.json compiles in strict mode", () => {
    validate = ajv.compile(readJson(FRAGMENT_SCHEMA));
  });
  await check("ajv: mergespec.schema.json compiles in strict mode", () => {
    new Ajv2020({ strict: true, allErrors: true }).compile(readJson(MERGESPEC_SCHEMA));
  });
  await check("ajv: target.schema.json compiles in strict mode", () => {
    new Ajv2020({ strict: true, allErrors: true }).compile(readJson(TARGET_SCHEMA));
  });
  let standard = null;
  for (const file of readdirSync(TARGETS).sort()) {
    await check(`ajv: targets/${file} compiles in strict mode`, () => {
      const v = new Ajv2020({ strict: true, allErrors: true }).compile(readJson(join(TARGETS, file)));
      if (file === "agent-skills.schema.json") standard = v;
    });
  }
  if (!validate) return;

  const errorsOf = (data) => (validate(data) ? [] : validate.errors);
  const has = (errors, instancePath, keyword, extra = () => true) =>
    errors.some((e) => e.instancePath === instancePath && e.keyword === keyword && extra(e));

  await check("ajv: valid.json passes", () => {
    const errors = errorsOf(readJson(fixture("valid.json")));
    if (errors.length) return `unexpected errors ${show(errors)}`;
  });
  await check("ajv: every `examples` value in the fragment schema passes", () => {
    const schema = readJson(FRAGMENT_SCHEMA);
    const bad = [];
    for (const [field, sub] of Object.entries(schema.properties)) {
      for (const example of sub.examples ?? []) {
        if (!validate({ [field]: example })) bad.push(`${field}: ${show(example)}`);
      }
    }
    if (bad.length) return `examples rejected: ${bad.join("; ")}`;
  });

  const typo = errorsOf(readJson(fixture("typo-and-wrong-type.json")));
  await check("ajv: typo'd field 'descripton' fails (additionalProperties at root)", () => {
    if (!has(typo, "", "additionalProperties", (e) => e.params.additionalProperty === "descripton"))
      return `no such error in ${show(typo)}`;
  });
  await check("ajv: trigger_keywords as a string fails (type at /trigger_keywords)", () => {
    if (!has(typo, "/trigger_keywords", "type")) return `no such error in ${show(typo)}`;
  });

  const nested = errorsOf(readJson(fixture("nested.json")));
  await check("ajv: a keyed entry without name/id/code fails (anyOf at /references/1)", () => {
    if (!has(nested, "/references/1", "anyOf")) return `no such error in ${show(nested)}`;
    if (nested.some((e) => e.instancePath.startsWith("/references/0")))
      return `the keyed entry /references/0 was rejected too: ${show(nested)}`;
  });
  await check("ajv: metadata as a string fails (type at /metadata)", () => {
    if (!has(nested, "/metadata", "type")) return `no such error in ${show(nested)}`;
  });

  // A list item's type inside a value that may be a string or a list is
  // the merge's own rule; the name's pattern and the description's length
  // are the standard's, a target's, and not judged on a layer's fragment.
  const constraintsData = readJson(fixture("constraints.json"));
  const constrained = errorsOf(constraintsData);
  await check("ajv: constraints.json: allowed-tools item of the wrong type (type at /allowed-tools/1)", () => {
    if (!has(constrained, "/allowed-tools/1", "type")) return `no such error in ${show(constrained)}`;
  });
  await check("ajv: constraints.json: the fragment schema leaves the standard's rules to its target", () => {
    const other = constrained.filter((e) => !e.instancePath.startsWith("/allowed-tools"));
    if (other.length) return `unexpected errors ${show(other)}`;
  });
  if (standard) {
    const byStandard = standard(constraintsData) ? [] : standard.errors;
    await check("ajv: constraints.json under agent-skills: name breaks its pattern (pattern at /name)", () => {
      if (!has(byStandard, "/name", "pattern")) return `no such error in ${show(byStandard)}`;
    });
    await check("ajv: constraints.json under agent-skills: empty description (minLength at /description)", () => {
      if (!has(byStandard, "/description", "minLength")) return `no such error in ${show(byStandard)}`;
    });
  }

  // Spec version 2's `$patch` directives.
  const directives = readJson(fixture("directives-valid.json"));
  await check("ajv: directives-valid.json holds every valid directive form", () => {
    const patch = (x) => (x !== null && typeof x === "object" && !Array.isArray(x) ? x.$patch : undefined);
    const keyedDelete = (key) =>
      ["references", "scripts", "assets"].some((f) =>
        (directives[f] ?? []).some((e) => patch(e) === "delete" && typeof e[key] === "string"),
      );
    // Every `$patch` in a mapping below a DEEP_MERGE field, with its depth (1 = the field's value).
    const deep = [];
    const walk = (value, depth) => {
      if (patch(value) !== undefined) deep.push({ verb: patch(value), depth });
      if (value !== null && typeof value === "object" && !Array.isArray(value))
        for (const [k, v] of Object.entries(value)) if (k !== "$patch") walk(v, depth + 1);
    };
    walk(directives.metadata, 1);
    walk(directives.hooks, 1);
    const deepAt = (verb, atTop) => deep.some((d) => d.verb === verb && (d.depth === 1) === atTop);
    const forms = {
      "APPEND {$patch: replace}": (directives.trigger_keywords ?? []).some((i) => patch(i) === "replace"),
      "APPEND {$patch: delete, value}": (directives.trigger_keywords ?? []).some(
        (i) => patch(i) === "delete" && "value" in i,
      ),
      "KEYED_REPLACE {$patch: replace}": ["references", "scripts", "assets"].some((f) =>
        (directives[f] ?? []).some((e) => patch(e) === "replace"),
      ),
      "KEYED_REPLACE delete by name": keyedDelete("name"),
      "KEYED_REPLACE delete by id": keyedDelete("id"),
      "KEYED_REPLACE delete by code": keyedDelete("code"),
      "DEEP_MERGE $patch: replace on the field": deepAt("replace", true),
      "DEEP_MERGE $patch: delete on the field": deepAt("delete", true),
      "DEEP_MERGE $patch: replace below a key": deepAt("replace", false),
      "DEEP_MERGE $patch: delete below a key": deepAt("delete", false),
      "DEEP_MERGE $patch: delete three keys down": deep.some((d) => d.verb === "delete" && d.depth >= 4),
    };
    const missing = Object.entries(forms).filter(([, present]) => !present).map(([form]) => form);
    if (missing.length) return `missing: ${missing.join("; ")}`;
  });
  await check("ajv: directives-valid.json passes", () => {
    const errors = errorsOf(directives);
    if (errors.length) return `unexpected errors ${show(errors)}`;
  });

  const misused = errorsOf(readJson(fixture("directives-bad.json")));
  await check("ajv: directives-bad.json: $patch at the top level (additionalProperties at root)", () => {
    if (!has(misused, "", "additionalProperties", (e) => e.params.additionalProperty === "$patch"))
      return `no such error in ${show(misused)}`;
  });
  await check("ajv: directives-bad.json: $patch: delte in a keyed entry (anyOf at /references/0, enum at /references/0/$patch)", () => {
    if (!has(misused, "/references/0", "anyOf") || !has(misused, "/references/0/$patch", "enum"))
      return `no such errors in ${show(misused)}`;
  });
  await check("ajv: directives-bad.json: $patch: delte in metadata (enum at /metadata/limits/$patch)", () => {
    if (!has(misused, "/metadata/limits/$patch", "enum", (e) => show(e.params.allowedValues) === show(["replace", "delete"])))
      return `no such error in ${show(misused)}`;
  });
  await check("ajv: directives-bad.json: {$patch: delete, other: 1} in metadata (maxProperties at /metadata/legacy)", () => {
    if (!has(misused, "/metadata/legacy", "maxProperties", (e) => e.params.limit === 1))
      return `no such error in ${show(misused)}`;
  });
}

// ------------------------------------------------ yaml-language-server ----

/** A minimal LSP client over a child process's stdio (Content-Length framing). */
class LspClient {
  constructor(command, args, settings) {
    this.settings = settings;
    this.nextId = 1;
    this.pending = new Map();
    this.diagnostics = new Map(); // uri -> list of published diagnostic arrays
    this.openedAt = new Map(); // uri -> when didOpen was sent
    this.waiters = new Set();
    this.configAnswers = 0;
    this.stderr = "";
    this.buffer = Buffer.alloc(0);
    this.exited = null;
    this.child = spawn(command, args, { cwd: HERE, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout.on("data", (chunk) => this.onData(chunk));
    this.child.stderr.on("data", (chunk) => {
      this.stderr = (this.stderr + chunk).slice(-4000);
    });
    this.child.stdin.on("error", () => {}); // the server died: reported by the waits
    // Never leave the server behind, whatever ends this process.
    process.once("exit", () => this.child.kill("SIGKILL"));
    this.child.on("exit", (code, signal) => {
      this.exited = `server exited (code ${code}, signal ${signal})`;
      for (const { reject } of this.pending.values()) reject(new Error(this.exited));
      this.pending.clear();
      this.poke();
    });
  }

  send(message) {
    const body = JSON.stringify({ jsonrpc: "2.0", ...message });
    this.child.stdin.write(`Content-Length: ${Buffer.byteLength(body, "utf8")}\r\n\r\n${body}`);
  }

  notify(method, params) {
    this.send({ method, params });
  }

  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolveRequest, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no answer to ${method} within ${TIMEOUT_MS / 1000} s`));
      }, TIMEOUT_MS);
      this.pending.set(id, {
        resolve: (v) => (clearTimeout(timer), resolveRequest(v)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      this.send({ id, method, params });
    });
  }

  onData(chunk) {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const headerEnd = this.buffer.indexOf("\r\n\r\n");
      if (headerEnd < 0) return;
      const header = this.buffer.subarray(0, headerEnd).toString("ascii");
      const match = /Content-Length:\s*(\d+)/i.exec(header);
      if (!match) throw new Error(`bad LSP header: ${header}`);
      const start = headerEnd + 4;
      const end = start + Number(match[1]);
      if (this.buffer.length < end) return;
      const message = JSON.parse(this.buffer.subarray(start, end).toString("utf8"));
      this.buffer = this.buffer.subarray(end);
      this.dispatch(message);
    }
  }

  dispatch(message) {
    if (message.method !== undefined && message.id !== undefined) {
      this.send({ id: message.id, result: this.answer(message.method, message.params) });
    } else if (message.id !== undefined) {
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (!waiter) return;
      if (message.error) waiter.reject(new Error(`LSP error ${show(message.error)}`));
      else waiter.resolve(message.result);
    } else if (message.method === "textDocument/publishDiagnostics") {
      const { uri, diagnostics } = message.params;
      if (!this.diagnostics.has(uri)) this.diagnostics.set(uri, []);
      this.diagnostics.get(uri).push(diagnostics);
      this.poke();
    }
  }

  /** The result for a request the server sends to the client. */
  answer(method, params) {
    if (method === "workspace/configuration") {
      const result = params.items.map((item) => {
        if (item.section === "yaml") {
          this.configAnswers += 1;
          return this.settings.yaml;
        }
        return item.section === "http" ? { proxy: "", proxyStrictSSL: false } : null;
      });
      this.poke();
      return result;
    }
    // client/registerCapability, window/workDoneProgress/create, refreshes, ...
    return null;
  }

  poke() {
    for (const w of this.waiters) w();
  }

  /** Resolves with `probe()`'s first non-undefined value; rejects at `deadline` (ms since epoch). */
  waitFor(what, probe, deadline = Date.now() + TIMEOUT_MS) {
    return new Promise((resolveWait, reject) => {
      const done = (f, v) => {
        clearTimeout(timer);
        this.waiters.delete(tick);
        f(v);
      };
      const tick = () => {
        const value = probe();
        if (value !== undefined) done(resolveWait, value);
        else if (this.exited) done(reject, new Error(`${this.exited} while waiting for ${what}`));
      };
      const timer = setTimeout(
        () => done(reject, new Error(`timed out after ${TIMEOUT_MS / 1000} s waiting for ${what}`)),
        Math.max(0, deadline - Date.now()),
      );
      this.waiters.add(tick);
      tick();
    });
  }

  /** The first diagnostics published for `uri` that satisfy `accept`, within the timeout of its opening. */
  diagnosticsFor(uri, accept = () => true) {
    return this.waitFor(
      `diagnostics for ${uri}`,
      () => (this.diagnostics.get(uri) ?? []).find(accept),
      (this.openedAt.get(uri) ?? Date.now()) + TIMEOUT_MS,
    );
  }

  open(uri, text) {
    this.openedAt.set(uri, Date.now());
    this.notify("textDocument/didOpen", {
      textDocument: { uri, languageId: "yaml", version: 1, text },
    });
  }

  async shutdown() {
    if (this.exited) return;
    try {
      await Promise.race([
        this.request("shutdown", null),
        new Promise((r) => setTimeout(r, 2000)),
      ]);
      this.notify("exit", null);
    } catch {
      // killed below anyway
    }
    this.child.kill("SIGKILL");
  }
}

/** `text` with its first-line modeline (if any) replaced by one naming `schemaRef`. */
const withModeline = (text, schemaRef) =>
  `# yaml-language-server: $schema=${schemaRef}\n` +
  text.replace(/^# yaml-language-server: \$schema=.*\n/, "");

const describe = (diags) =>
  show(diags.map((d) => ({ line: d.range.start.line, severity: d.severity, message: d.message })));

/** Problem string unless some diagnostic on `line` has a message matching every regex. */
function expectOnLine(diags, line, ...patterns) {
  const hit = diags.some(
    (d) => d.range.start.line === line && patterns.every((p) => p.test(d.message)),
  );
  return hit ? null : `no diagnostic on line ${line} matching ${patterns.join(" and ")}; got ${describe(diags)}`;
}

function expectNone(diags) {
  return diags.length === 0 ? null : `expected no diagnostics, got ${describe(diags)}`;
}

async function yamlLanguageServerChecks() {
  console.log(`\n-- yaml-language-server ${version("yaml-language-server")} (LSP over stdio)`);
  const settings = { yaml: { validate: true, schemas: {}, schemaStore: { enable: false } } };
  const server = join(HERE, "node_modules/yaml-language-server/bin/yaml-language-server");
  const client = new LspClient(process.execPath, [server, "--stdio"], settings);
  try {
    await check("yls: initialize handshake", async () => {
      const result = await client.request("initialize", {
        processId: process.pid,
        clientInfo: { name: "bernstein-editor-check" },
        locale: "en",
        rootUri: pathToFileURL(ROOT).href,
        workspaceFolders: [{ uri: pathToFileURL(ROOT).href, name: "bernstein" }],
        capabilities: {
          workspace: { configuration: true, didChangeConfiguration: { dynamicRegistration: false } },
          textDocument: {
            synchronization: { dynamicRegistration: false },
            publishDiagnostics: { relatedInformation: true },
          },
        },
        initializationOptions: {},
      });
      client.notify("initialized", {});
      client.notify("workspace/didChangeConfiguration", { settings });
      // Open documents only once the server has our settings (schema store off).
      await client.waitFor("a workspace/configuration request", () =>
        client.configAnswers > 0 ? true : undefined,
      );
      if (!result?.capabilities) return `no capabilities in ${show(result)}`;
    });
    if (client.exited || client.configAnswers === 0) {
      report("yls: remaining checks", `server not ready; its stderr: ${client.stderr}`);
      return;
    }

    const schemaUrl = pathToFileURL(FRAGMENT_SCHEMA).href;
    // The committed fixtures carry a relative modeline (what `skills new`
    // writes); the "absolute" documents get a file:// URL built here instead.
    const docs = {};
    const openDoc = (key, path, text, uri = pathToFileURL(path).href) => {
      docs[key] = { uri, text };
      client.open(uri, text);
    };
    const virtual = (name) => join(FIXTURES, "runtime-url", name);
    const typoText = readFileSync(fixture("typo-and-wrong-type.yaml"), "utf8");
    const nestedText = readFileSync(fixture("nested.yaml"), "utf8");
    const validText = readFileSync(fixture("valid.yaml"), "utf8");
    const constraintsText = readFileSync(fixture("constraints.yaml"), "utf8");
    const directivesText = readFileSync(fixture("directives-valid.yaml"), "utf8");
    const misusedText = readFileSync(fixture("directives-bad.yaml"), "utf8");
    const teamExample = join(ROOT, "examples/layers/team/writer.yaml");
    const specText = readFileSync(join(ROOT, "spec/mergespec.yaml"), "utf8");

    openDoc("typoAbs", virtual("typo-and-wrong-type.yaml"), withModeline(typoText, schemaUrl));
    openDoc("typoRel", fixture("typo-and-wrong-type.yaml"), typoText);
    openDoc("validAbs", virtual("valid.yaml"), withModeline(validText, schemaUrl));
    openDoc("nested", fixture("nested.yaml"), nestedText);
    openDoc("constraints", fixture("constraints.yaml"), constraintsText);
    openDoc("directives", fixture("directives-valid.yaml"), directivesText);
    openDoc("misused", fixture("directives-bad.yaml"), misusedText);
    openDoc("team", teamExample, readFileSync(teamExample, "utf8"));
    openDoc(
      "spec",
      virtual("mergespec.yaml"),
      `# yaml-language-server: $schema=${pathToFileURL(MERGESPEC_SCHEMA).href}\n${specText}`,
    );
    openDoc(
      "missing",
      virtual("missing-schema.yaml"),
      withModeline(validText, pathToFileURL(join(SCHEMAS, "no-such.schema.json")).href),
    );

    const nonEmpty = (d) => d.length > 0;
    const typoLine = lineOf(typoText, "descripton:");
    const typeLine = lineOf(typoText, "trigger_keywords:");

    for (const [key, label] of [
      ["typoAbs", "file:// URL modeline"],
      ["typoRel", "relative modeline"],
    ]) {
      let diags = [];
      await check(`yls (${label}): diagnostics published for typo-and-wrong-type.yaml`, async () => {
        diags = await client.diagnosticsFor(docs[key].uri, nonEmpty);
      });
      await check(`yls (${label}): line ${typoLine} flags 'descripton' as not allowed`, () =>
        expectOnLine(diags, typoLine, /descripton/, /not allowed/i),
      );
      await check(`yls (${label}): line ${typeLine} flags trigger_keywords' type (array)`, () =>
        expectOnLine(diags, typeLine, /type/i, /array/i),
      );
    }

    await check("yls: nested.yaml flags the entry without name/id/code and metadata's type", async () => {
      const diags = await client.diagnosticsFor(docs.nested.uri, nonEmpty);
      const entryLine = lineOf(nestedText, "  - url:");
      const metaLine = lineOf(nestedText, "metadata:");
      const problems = [
        diags.some((d) => d.range.start.line === entryLine)
          ? null
          : `no diagnostic on line ${entryLine}; got ${describe(diags)}`,
        expectOnLine(diags, metaLine, /type/i, /object/i),
        diags.some((d) => d.range.start.line === lineOf(nestedText, "  - name:"))
          ? `the keyed entry was flagged too: ${describe(diags)}`
          : null,
      ].filter(Boolean);
      return problems.length ? problems.join("; ") : null;
    });
    await check("yls: constraints.yaml under agent-skills flags the name's pattern and the empty description", async () => {
      const diags = await client.diagnosticsFor(docs.constraints.uri, nonEmpty);
      const problems = [
        expectOnLine(diags, lineOf(constraintsText, "name:"), /pattern/i),
        expectOnLine(diags, lineOf(constraintsText, "description:"), /minimum length|shorter/i),
      ].filter(Boolean);
      return problems.length ? problems.join("; ") : null;
    });
    {
      let diags = [];
      await check("yls: diagnostics published for directives-bad.yaml", async () => {
        diags = await client.diagnosticsFor(docs.misused.uri, nonEmpty);
      });
      const top = lineOf(misusedText, "$patch:");
      const entry = lineAfter(misusedText, "references:", "    $patch:");
      const limits = lineAfter(misusedText, "  limits:", "    $patch:");
      const legacy = lineAfter(misusedText, "  legacy:", "    $patch:");
      await check(`yls: directives-bad.yaml line ${top} flags the top-level $patch as not allowed`, () =>
        expectOnLine(diags, top, /\$patch/, /not allowed/i),
      );
      await check(`yls: directives-bad.yaml line ${entry} flags $patch: delte in the references entry`, () =>
        expectOnLine(diags, entry, /not accepted|valid values/i, /delete/),
      );
      await check(`yls: directives-bad.yaml line ${limits} flags $patch: delte in metadata.limits`, () =>
        expectOnLine(diags, limits, /not accepted|valid values/i, /replace/, /delete/),
      );
      await check(`yls: directives-bad.yaml line ${legacy} flags {$patch: delete, other: 1} in metadata.legacy`, () =>
        expectOnLine(diags, legacy, /more properties|limit of 1/i),
      );
    }
    // Each document gets a (possibly empty) publishDiagnostics once the
    // server has validated it, so "no diagnostics" is a definite answer.
    await check("yls: directives-valid.yaml (every $patch form) has no diagnostics", async () =>
      expectNone(await client.diagnosticsFor(docs.directives.uri)),
    );
    await check("yls: valid.yaml has no diagnostics", async () =>
      expectNone(await client.diagnosticsFor(docs.validAbs.uri)),
    );
    await check("yls: examples/layers/team/writer.yaml (relative modeline) has no diagnostics", async () =>
      expectNone(await client.diagnosticsFor(docs.team.uri)),
    );
    await check("yls: spec/mergespec.yaml passes mergespec.schema.json", async () =>
      expectNone(await client.diagnosticsFor(docs.spec.uri)),
    );
    await check("yls: a modeline naming a missing schema is reported (so 'no diagnostics' means something)", async () => {
      const diags = await client.diagnosticsFor(docs.missing.uri);
      if (!diags.length) return "no diagnostics for a missing schema";
    });
  } finally {
    await client.shutdown();
  }
}

// --------------------------------------------------------------- Taplo ----

/** Runs `taplo lint` on one file; returns its exit status and errors by 0-based line. */
function taploLint(path) {
  const taplo = join(HERE, "node_modules/@taplo/cli/dist/cli.js");
  const run = spawnSync(
    process.execPath,
    [taplo, "lint", "--no-auto-config", "--colors", "never", path],
    { cwd: HERE, encoding: "utf8", timeout: TIMEOUT_MS },
  );
  if (run.error) throw run.error;
  const output = `${run.stdout}${run.stderr}`;
  // codespan format: "error: MESSAGE" then "  ┌─ PATH:LINE:COL"
  const errors = [];
  const lines = output.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const msg = /^error: (.*)$/.exec(lines[i]);
    const at = msg && /┌─ .*:(\d+):(\d+)\s*$/.exec(lines[i + 1] ?? "");
    if (at) errors.push({ line: Number(at[1]) - 1, message: msg[1] });
  }
  return { status: run.status, errors, output };
}

async function taploChecks() {
  const taploVersion = spawnSync(
    process.execPath,
    [join(HERE, "node_modules/@taplo/cli/dist/cli.js"), "--version"],
    { encoding: "utf8" },
  ).stdout.trim();
  console.log(`\n-- Taplo (@taplo/cli ${version("@taplo/cli")}, ${taploVersion})`);
  const onLine = (errors, line, ...patterns) =>
    errors.some((e) => e.line === line && patterns.every((p) => p.test(e.message)))
      ? null
      : `no error on line ${line} matching ${patterns.join(" and ")}; got ${show(errors)}`;

  const typoText = readFileSync(fixture("typo-and-wrong-type.toml"), "utf8");
  let typo = null;
  await check("taplo: typo-and-wrong-type.toml fails lint", () => {
    typo = taploLint(fixture("typo-and-wrong-type.toml"));
    if (typo.status === 0) return `exit 0; output: ${typo.output}`;
  });
  if (typo) {
    const typoLine = lineOf(typoText, "descripton");
    const typeLine = lineOf(typoText, "trigger_keywords");
    await check(`taplo: line ${typoLine} flags 'descripton' as not allowed`, () =>
      onLine(typo.errors, typoLine, /descripton/, /not allowed/i),
    );
    await check(`taplo: line ${typeLine} flags trigger_keywords' type (array)`, () =>
      onLine(typo.errors, typeLine, /array/),
    );
  }

  await check("taplo: nested.toml flags metadata's type and the entry without name/id/code", () => {
    const nestedText = readFileSync(fixture("nested.toml"), "utf8");
    const { status, errors, output } = taploLint(fixture("nested.toml"));
    if (status === 0) return `exit 0; output: ${output}`;
    const lines = nestedText.split("\n");
    const entryLine = lines.findIndex((l, i) => l.startsWith("url =") && lines[i - 1] === "[[references]]");
    return (
      [
        onLine(errors, lineOf(nestedText, "metadata"), /object/),
        onLine(errors, entryLine, /anyOf/),
      ]
        .filter(Boolean)
        .join("; ") || null
    );
  });

  await check("taplo: constraints.toml under agent-skills flags the name's pattern and the empty description", () => {
    const text = readFileSync(fixture("constraints.toml"), "utf8");
    const { status, errors, output } = taploLint(fixture("constraints.toml"));
    if (status === 0) return `exit 0; output: ${output}`;
    return (
      [
        onLine(errors, lineOf(text, "name ="), /pattern|match/i),
        onLine(errors, lineOf(text, "description ="), /short|length/i),
      ]
        .filter(Boolean)
        .join("; ") || null
    );
  });

  // The error about a root mapping is repeated on every line of the file,
  // so the top-level `$patch` is recognised by its message, which names it;
  // the others are errors of their own kind on the `$patch` line.
  const misusedText = readFileSync(fixture("directives-bad.toml"), "utf8");
  let misused = null;
  await check("taplo: directives-bad.toml fails lint", () => {
    misused = taploLint(fixture("directives-bad.toml"));
    if (misused.status === 0) return `exit 0; output: ${misused.output}`;
  });
  if (misused) {
    const top = lineOf(misusedText, '"$patch"');
    const entry = lineAfter(misusedText, "[[references]]", '"$patch"');
    const limits = lineAfter(misusedText, "[metadata.limits]", '"$patch"');
    const legacy = lineAfter(misusedText, "[metadata.legacy]", '"$patch"');
    await check(`taplo: directives-bad.toml line ${top} flags the top-level $patch as not allowed`, () =>
      onLine(misused.errors, top, /not allowed/i, /'\$patch'/),
    );
    await check(`taplo: directives-bad.toml line ${entry} flags "$patch" = "delte" in the references entry`, () =>
      onLine(misused.errors, entry, /delte/, /anyOf/),
    );
    await check(`taplo: directives-bad.toml line ${limits} flags "$patch" = "delte" in metadata.limits`, () =>
      onLine(misused.errors, limits, /"delte" is not one of/, /replace/, /delete/),
    );
    await check(`taplo: directives-bad.toml line ${legacy} flags {"$patch" = "delete", other = 1} in metadata.legacy`, () =>
      onLine(misused.errors, legacy, /more than 1 propert/),
    );
  }

  for (const [label, path] of [
    ["valid.toml", fixture("valid.toml")],
    ["directives-valid.toml (every $patch form)", fixture("directives-valid.toml")],
    ["examples/layers/user/writer.toml", join(ROOT, "examples/layers/user/writer.toml")],
  ]) {
    await check(`taplo: ${label} passes lint (a schema that fails to load would fail it)`, () => {
      const { status, output } = taploLint(path);
      if (status !== 0) return `exit ${status}; output: ${output}`;
    });
  }
}

// ---------------------------------------------------------------- main ----

const started = Date.now();
try {
  await ajvChecks();
  await yamlLanguageServerChecks();
  await taploChecks();
} catch (e) {
  report("editor checks ran to the end", e?.stack ?? String(e));
}
console.log(`\n(${((Date.now() - started) / 1000).toFixed(1)} s)`);
console.log(`editor: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
