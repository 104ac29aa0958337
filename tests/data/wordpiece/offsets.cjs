// Writes offsets.json beside this script: for every text of vectors.json, the ids and each token's bytes of
// the text (offsets) that Hugging Face's own tokenizers library (the Rust crate's Node binding, npm package
// "tokenizers" 0.23.2) gives with the same vocabularies. tst_wordpiece gathers both sides' tokens into words
// and compares them. Run by hand at development time, never by the build or the tests:
//
//   mkdir -p /tmp/wp && ATTNSCOPE_WORDPIECE_VOCAB_DIR=/tmp/wp build/bin/tst_wordpiece
//   (cd /tmp/oracle && npm install tokenizers@0.23.2)
//   NODE_PATH=/tmp/oracle/node_modules node tests/data/wordpiece/offsets.cjs /tmp/wp
const fs = require("fs");
const path = require("path");
const { Tokenizer } = require("tokenizers");
const { tokenizerJson } = require("./berttokenizer.cjs");

// The binding gives offsets in code points of the text; the tests index UTF-8 bytes.
function byteOffsets(text, offsets) {
  const byteAt = [0];
  for (const ch of text) byteAt.push(byteAt[byteAt.length - 1] + Buffer.byteLength(ch, "utf8"));
  return offsets.map(([b, e]) => [byteAt[b], byteAt[e]]);
}

async function main() {
  const dir = process.argv[2];
  const vectors = JSON.parse(fs.readFileSync(path.join(__dirname, "vectors.json"), "utf8"));
  const lines = ["{", ` "source": "tokenizers ${require("tokenizers/package.json").version} (npm), offsets in bytes; generated once at development time",`];
  for (const name of ["uncased", "cased"]) {
    const vocab = fs.readFileSync(path.join(dir, `vocab-${name}.txt`), "utf8").split("\n");
    vocab.pop();  // the file ends with a newline
    const tokenizer = Tokenizer.fromString(JSON.stringify(tokenizerJson(vocab, name === "uncased")));
    const rows = [];
    for (const { text } of vectors[name]) {
      const e = await tokenizer.encode(text, null, { addSpecialTokens: true });
      // Special: the template's [CLS] and [SEP], and a special token typed in the text.
      const special = e.getIds().map((id, i) => (e.getSpecialTokensMask()[i] || id < 5 && id !== vocab.indexOf("[UNK]") ? 1 : 0));
      rows.push(`  {"text": ${JSON.stringify(text)}, "ids": ${JSON.stringify(e.getIds())}, "offsets": ${JSON.stringify(byteOffsets(text, e.getOffsets()))}, "special": ${JSON.stringify(special)}}`);
    }
    lines.push(` "${name}": [`, rows.join(",\n"), name === "cased" ? " ]" : " ],");
  }
  lines.push("}");
  fs.writeFileSync(path.join(__dirname, "offsets.json"), lines.join("\n") + "\n");
}

main().catch((e) => { console.error(e); process.exit(1); });
