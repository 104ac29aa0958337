// The tokenizer.json that both oracle scripts build from a test vocabulary (one token per line, the five
// special tokens first): BERT's normalizer, pre-tokenizer, WordPiece model and [CLS] ... [SEP] template.
function tokenizerJson(vocab, lowercase) {
  const v = {};
  vocab.forEach((t, i) => { v[t] = i; });
  const added = vocab.slice(0, 5).map((t, i) => ({
    id: i, content: t, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
  }));
  return {
    version: "1.0",
    added_tokens: added,
    normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase },
    pre_tokenizer: { type: "BertPreTokenizer" },
    post_processor: {
      type: "TemplateProcessing",
      single: [{ SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "[SEP]", type_id: 0 } }],
      pair: [],
      special_tokens: {
        "[CLS]": { id: "[CLS]", ids: [vocab.indexOf("[CLS]")], tokens: ["[CLS]"] },
        "[SEP]": { id: "[SEP]", ids: [vocab.indexOf("[SEP]")], tokens: ["[SEP]"] },
      },
    },
    decoder: { type: "WordPiece", prefix: "##", cleanup: true },
    model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab: v },
  };
}

module.exports = { tokenizerJson };
