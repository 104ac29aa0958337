// Writes vectors.json beside this script: the ids an independent WordPiece implementation, Hugging Face's
// tokenizers.js (npm package @huggingface/tokenizers, 0.2.0), gives for each text below, with the test
// vocabularies tst_wordpiece writes. Run by hand at development time, never by the build or the tests:
//
//   mkdir -p /tmp/wp && ATTNSCOPE_WORDPIECE_VOCAB_DIR=/tmp/wp build/bin/tst_wordpiece
//   (cd /tmp/wp && npm install @huggingface/tokenizers@0.2.0)
//   node tests/data/wordpiece/oracle.mjs /tmp/wp
//
// The texts avoid the one place where tokenizers.js 0.2.0 is known to depart from BERT's published
// tokenizer: it tests for CJK ideographs one UTF-16 unit at a time, so ideographs beyond U+FFFF (CJK
// Extension B and later) are not split apart. tst_wordpiece checks that case by hand instead.
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const dir = process.argv[2];
const require = createRequire(join(dir, "package.json"));
const { Tokenizer } = require("@huggingface/tokenizers");
const { tokenizerJson } = createRequire(import.meta.url)("./berttokenizer.cjs");

const cases = {
  uncased: [
    "The cat sat on the mat.",
    "Café naïve RÉSUMÉ Ångström",
    "中国人",
    "日本語かが",
    "한국",
    "Hello!!! ...world?!",
    "$5 + €5",
    "a".repeat(100),
    "a".repeat(101),
    "a\u0000b\tc\u200Bd\u00ADe\uFFFDf\u2028g\u0007h\u00A0i\r\nj",
    "un[MASK]able",
    "[mask] [MASK][MASK] [MASK",
    "[CLS] the [SEP]",
    "aquarium quick quiz",
    "İSTANBUL",
    "ΟΔΟΣ οδοσ",
    "Straße STRASSE",
    "emoji 😀 emoji",
    "tokenizer tokenize token",
    "abcab abc",
    "",
    "   \t\n  ",
    "«quick»—“brown” fox… ¿run? ¡jump!",
    "中国、日本。人",
    "x1y2z3 42 3.14",
    "The QUICK brown fox jumped over the lazy dog's mat; un-able, (run) [playing] {played} <dog>",
    "cafe\u0301 Cafe\u0301",
    "hello\u3000world\u00A0again",
  ],
  cased: [
    "The Café",
    "É éA",
    "Hello WORLD",
    "İ Ist",
    "ΟΔΟΣ café",
    "the cat [MASK] on The mat.",
    "Résumé naïve",
    "中国 The 日本",
  ],
};

const out = { source: "@huggingface/tokenizers 0.2.0 (npm), Tokenizer.encode(text).ids; generated once at development time" };
for (const [name, texts] of Object.entries(cases)) {
  const vocab = readFileSync(join(dir, `vocab-${name}.txt`), "utf8").split("\n");
  vocab.pop();  // the file ends with a newline
  const tokenizer = new Tokenizer(tokenizerJson(vocab, name === "uncased"), {});
  out[name] = texts.map((text) => ({ text, ids: tokenizer.encode(text).ids }));
}
const target = join(dirname(fileURLToPath(import.meta.url)), "vectors.json");
// One vector per line, so a change to one shows as one line in a diff.
const lines = ["{", ` "source": ${JSON.stringify(out.source)},`];
for (const name of Object.keys(cases)) {
  const rows = out[name].map((v) => `  {"text": ${JSON.stringify(v.text)}, "ids": ${JSON.stringify(v.ids)}}`);
  lines.push(` "${name}": [`, rows.join(",\n"), name === "cased" ? " ]" : " ],");
}
lines.push("}");
writeFileSync(target, lines.join("\n") + "\n");
console.log(`wrote ${target}`);
