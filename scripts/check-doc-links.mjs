#!/usr/bin/env node
// Checks the relative links of README.md and docs/*.md: every `](target)`
// outside code must name a file that exists and, with `#anchor`, a heading
// of that file (GitHub's slugs). Usage: node scripts/check-doc-links.mjs
import { readFileSync, readdirSync, existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const files = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => join("docs", f))];

// The text outside fenced code blocks, with inline code spans removed.
function prose(text) {
  let inFence = false;
  return text
    .split("\n")
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        inFence = !inFence;
        return "";
      }
      return inFence ? "" : line.replace(/`+[^`]*`+/g, "");
    })
    .join("\n");
}

// GitHub's anchors: lower case, punctuation dropped, spaces to hyphens,
// repeats numbered -1, -2, ….
const anchorCache = new Map();
function anchors(file) {
  if (anchorCache.has(file)) return anchorCache.get(file);
  const seen = new Map();
  const set = new Set();
  let inFence = false;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    const m = !inFence && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    let slug = m[1]
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    set.add(n ? `${slug}-${n}` : slug);
  }
  anchorCache.set(file, set);
  return set;
}

let bad = 0;
let checked = 0;
for (const rel of files) {
  const file = join(root, rel);
  for (const [, target] of prose(readFileSync(file, "utf8")).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
    checked++;
    const [path, anchor] = target.split("#", 2);
    const dest = path ? resolve(dirname(file), decodeURIComponent(path)) : file;
    let why = "";
    if (!existsSync(dest)) why = "no such file";
    else if (anchor !== undefined) {
      if (statSync(dest).isDirectory() || !dest.endsWith(".md")) why = "anchor on a file that is not markdown";
      else if (!anchors(dest).has(decodeURIComponent(anchor))) why = "no such heading";
    }
    if (why) {
      bad++;
      console.log(`${rel}: ${target}: ${why}`);
    }
  }
}
console.log(`${checked} relative links checked in ${files.length} files, ${bad} broken`);
process.exit(bad ? 1 : 0);
