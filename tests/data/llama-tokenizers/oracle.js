// Computes the expected ids, and each token's bytes of the text (offsets), in vectors.json with Hugging Face's own tokenizers library (the Rust crate's
// Node binding, npm package "tokenizers"), for the tokenizer.json files tests/core/tinytokenizers.h writes.
// Not part of the build or the test run; to regenerate after changing the generator or the cases:
//   ATTNSCOPE_WRITE_TOKENIZERS=/tmp/tok build/bin/tst_llamatokenizer generatorMatchesVectors
//   (cd /tmp/oracle && npm install tokenizers@0.23.2) && NODE_PATH=/tmp/oracle/node_modules \
//     node tests/data/llama-tokenizers/oracle.js /tmp/tok > tests/data/llama-tokenizers/vectors.json
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require('tokenizers');

// The hard cases: leading and repeated spaces, newlines and tabs, digits, contractions, accents composed
// and decomposed, other scripts, emoji (bytes the SentencePiece vocabularies lack), added tokens inside text.
const cases = [
  'Hello world',
  'hello world',
  ' leading space',
  '   three leading spaces',
  'trailing space ',
  'double  space inside',
  'line one\nline two\n\n',
  '\ttab and\r\nwindows newline',
  '1234567 apples and 3.14159',
  'the year 2024!!! ...?',
  "I'm sure they'll see WE'LL don't",
  'na\u00efve caf\u00e9',
  'cafe\u0301 (decomposed)',
  '\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8',
  '\u041f\u0440\u0438\u0432\u0435\u0442 \u043c\u0438\u0440',
  'I \u2764\ufe0f \u{1f999} llamas \u{1f44b}\u{1f30d}',
  'emoji at end \u{1f999}',
  '\u00a0non-breaking\u2003em space',
  '',
  '   ',
  '\n',
  '<s>',
  'a<s>b</s>c',
  '<s> the llama',
  '<|begin_of_text|>Hello<|eot_id|> world<|end_of_text|>',
  'fill the <mask> here and <mask>there',
  'word<sep>word and <sep> alone',
  'x=1+2; y="str" # comment',
  'the quick brown fox jumps over the lazy dog.',
  'llamallamallama',
  'HELLO Hello hello',
];

// FNV-1a over the file's bytes, as tinytokenizers.h computes it.
function checksum(bytes) {
  let h = 1469598103934665603n;
  for (const b of bytes) {
    h ^= BigInt(b);
    h = (h * 1099511628211n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, '0');
}

// The binding gives offsets in code points of the text; the tests index UTF-8 bytes.
function byteOffsets(text, offsets) {
  const byteAt = [0];  // byteAt[c]: the UTF-8 bytes before code point c
  for (const ch of text) byteAt.push(byteAt[byteAt.length - 1] + Buffer.byteLength(ch, 'utf8'));
  return offsets.map(([b, e]) => [byteAt[b], byteAt[e]]);
}

function isTyped(text, encoding, i, specialContent) {
  const content = specialContent.get(encoding.getIds()[i]);
  const [b, e] = encoding.getOffsets()[i];
  return content !== undefined && Array.from(text).slice(b, e).join('').trim() === content;  // lstrip/rstrip take spaces
}

async function main() {
  const dir = process.argv[2];
  const out = { generator: 'tests/core/tinytokenizers.h', oracle: 'tokenizers (npm) ' + require('tokenizers/package.json').version, tokenizers: {} };
  for (const kind of fs.readdirSync(dir).sort()) {
    const file = path.join(dir, kind, 'tokenizer.json');
    if (!fs.existsSync(file)) continue;
    const tokenizer = Tokenizer.fromFile(file);
    const entry = { checksum: checksum(fs.readFileSync(file)), cases: [] };
    // Special: what the post-processor added (the binding's mask) and the added tokens the file marks special,
    // also where typed in the text.
    // (An id the model also produces for text, as <unk>, is special only where the text spells the token.)
    const specialContent = new Map(JSON.parse(fs.readFileSync(file, 'utf8')).added_tokens.filter((t) => t.special).map((t) => [t.id, t.content]));
    for (const text of cases) {
      const e = await tokenizer.encode(text, null, { addSpecialTokens: true });
      entry.cases.push({ text, ids: e.getIds(), tokens: e.getTokens(), offsets: byteOffsets(text, e.getOffsets()),
                         special: e.getSpecialTokensMask().map((m, i) => (m || isTyped(text, e, i, specialContent) ? 1 : 0)) });
    }
    out.tokenizers[kind] = entry;
  }
  // One line per array of numbers, so that the file stays readable.
  const text = JSON.stringify(out, null, 1).replace(/\[[-\d,\s\[\]]*\]/g, (m) => m.replace(/\s+/g, ''));
  process.stdout.write(text + '\n');
}

main().catch((e) => { console.error(e); process.exit(1); });
