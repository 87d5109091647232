// Reads every frontmatter of the corpus with js-yaml (its default schema,
// which reads timestamps and merge keys) and with the yaml package in its
// YAML 1.1 and 1.2 modes, and fails on any that does not read back as its
// JSON value (see check.py for the corpus). Numbers compare with
// Object.is, so -0 is not 0; JavaScript has no separate integers, so
// 1 and 1.0 are alike here (check.py tells them apart).
//
// Prints one PASS/FAIL line per reader; exits 1 on any difference.
//
// Usage: node check.mjs CORPUS

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { isDeepStrictEqual } from "node:util";

import jsyaml from "js-yaml";
import YAML from "yaml";

const require = createRequire(import.meta.url);
const version = (pkg) => require(`${pkg}/package.json`).version;

const corpus = JSON.parse(readFileSync(process.argv[2], "utf8"));

const readers = [
  [`js-yaml ${version("js-yaml")}`, (text) => jsyaml.load(text)],
  [
    `yaml ${version("yaml")} (YAML 1.1)`,
    (text) => YAML.parse(text, { version: "1.1", uniqueKeys: true, maxAliasCount: -1 }),
  ],
  [`yaml ${version("yaml")} (YAML 1.2)`, (text) => YAML.parse(text, { version: "1.2", uniqueKeys: true })],
];

const short = (v) => {
  let s;
  try {
    s = v instanceof Date ? `Date(${v.toISOString()})` : JSON.stringify(v);
  } catch {
    s = String(v);
  }
  return (s ?? String(v)).slice(0, 200);
};

let failed = 0;
for (const [name, read] of readers) {
  const bad = [];
  for (const c of corpus) {
    let got;
    try {
      got = read(c.yaml);
    } catch (e) {
      got = `<error: ${String(e.message).split("\n")[0]}>`;
    }
    if (!isDeepStrictEqual(got, c.json)) bad.push([c, got]);
  }
  for (const [c, got] of bad.slice(0, 10)) {
    console.log(`  ${JSON.stringify(c.yaml.slice(0, 200))}\n    read as ${short(got)}\n    not     ${short(c.json)}`);
  }
  console.log(`${bad.length ? "FAIL" : "PASS"} ${name}: ${corpus.length - bad.length} of ${corpus.length} read back equal`);
  if (bad.length) failed += 1;
}
process.exit(failed ? 1 : 0);
