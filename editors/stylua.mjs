// Stylua on the Neovim plugin's Lua, through stylua's WebAssembly build (npm `@johnnymorganz/stylua`: a library
// without a command line, so this is that command line). `--check` lists the files it would change and exits 1;
// `--write` rewrites them. The settings are the repo root's .stylua.toml, in the stylua command's own spelling.
// Usage: node editors/stylua.mjs --check|--write PATH... (files or directories; directories are walked for *.lua)

import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import * as stylua from "@johnnymorganz/stylua";
import { parse } from "smol-toml";

const ROOT = resolve(import.meta.dirname, "..");
const CONFIG = join(ROOT, ".stylua.toml");

// .stylua.toml key → [the wasm Config's field, the enum its values name (none: a number or a boolean)].
const KEYS = {
  column_width: ["column_width", null],
  indent_width: ["indent_width", null],
  line_endings: ["line_endings", stylua.LineEndings],
  indent_type: ["indent_type", stylua.IndentType],
  quote_style: ["quote_style", stylua.QuoteStyle],
  call_parentheses: ["call_parentheses", stylua.CallParenType],
  collapse_simple_statement: ["collapse_simple_statement", stylua.CollapseSimpleStatement],
  space_after_function_names: ["space_after_function_names", stylua.SpaceAfterFunctionNames],
  block_newline_gaps: ["block_newline_gaps", stylua.BlockNewlineGaps],
  syntax: ["syntax", stylua.LuaVersion],
};

/** A wasm Config from .stylua.toml's settings; an unknown key or value is an error naming it, not a silent default.
 * A new one for each file: formatCode takes ownership of (and frees) the Config it is given. */
function makeConfig(settings) {
  const config = stylua.Config.new();
  for (const [key, value] of Object.entries(settings)) {
    if (key === "sort_requires") {
      config.sort_requires = stylua.SortRequiresConfig.new().set_enabled(value.enabled === true);
      continue;
    }
    const known = KEYS[key];
    if (known === undefined) throw new Error(`${CONFIG}: unknown setting ${key}`);
    const [field, names] = known;
    if (names === null) {
      config[field] = value;
    } else if (typeof value === "string" && typeof names[value] === "number") {
      config[field] = names[value];
    } else {
      const allowed = Object.keys(names).filter((n) => Number.isNaN(Number(n)));
      throw new Error(`${CONFIG}: ${key} = ${JSON.stringify(value)} is not one of ${allowed.join(", ")}`);
    }
  }
  return config;
}

/** The source formatted to stylua's fixed point: a wrapped call can change again on a second pass (the stylua
 * command has the same habit), and `--check` must accept what `--write` wrote. */
function format(source, settings) {
  let text = source;
  for (let pass = 0; pass < 5; pass++) {
    const next = stylua.formatCode(text, makeConfig(settings), undefined, stylua.OutputVerification.Full);
    if (next === text) return text;
    text = next;
  }
  throw new Error("stylua's output did not settle in 5 passes");
}

/** Every *.lua file under the given paths, sorted. */
function luaFiles(paths) {
  const out = [];
  const walk = (path) => {
    if (statSync(path).isDirectory()) {
      for (const name of readdirSync(path).sort()) walk(join(path, name));
    } else if (path.endsWith(".lua")) {
      out.push(path);
    }
  };
  for (const p of paths) walk(resolve(p));
  return out;
}

/** The 1-based number of the first line where a and b differ. */
function firstDifference(a, b) {
  const la = a.split("\n");
  const lb = b.split("\n");
  let i = 0;
  while (i < la.length && la[i] === lb[i]) i++;
  return i + 1;
}

function main(argv) {
  const [mode, ...paths] = argv;
  if ((mode !== "--check" && mode !== "--write") || paths.length === 0) {
    process.stderr.write("usage: node editors/stylua.mjs --check|--write PATH...\n");
    return 2;
  }
  const settings = parse(readFileSync(CONFIG, "utf8"));
  makeConfig(settings).free(); // a bad setting fails before any file is read
  let changed = 0;
  let failed = 0;
  const files = luaFiles(paths);
  for (const file of files) {
    const name = relative(process.cwd(), file);
    const source = readFileSync(file, "utf8");
    let formatted;
    try {
      formatted = format(source, settings);
    } catch (e) {
      process.stderr.write(`${name}: stylua could not format it: ${e}\n`);
      failed++;
      continue;
    }
    if (formatted === source) continue;
    changed++;
    if (mode === "--write") {
      writeFileSync(file, formatted);
      process.stdout.write(`formatted ${name}\n`);
    } else {
      process.stdout.write(
        `${name}:${firstDifference(source, formatted)}: not formatted (node editors/stylua.mjs --write)\n`,
      );
    }
  }
  const verb = mode === "--write" ? "formatted" : "to format";
  process.stdout.write(`stylua: ${files.length} Lua files, ${changed} ${verb}, ${failed} unreadable\n`);
  return failed > 0 || (mode === "--check" && changed > 0) ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
