// The bodies of tinytokenizers.h's functions, compiled once into the tests' fixture library.
#include "tinytokenizers.h"

namespace tinytok {

const std::vector<std::string>& kinds()
{
    static const std::vector<std::string> k = {"llama3", "qwen2", "smollm", "llama2", "mistral", "nofallback"};
    return k;
}

bool isByteLevel(const std::string& kind) { return kind == "llama3" || kind == "qwen2" || kind == "smollm"; }

std::vector<std::string> corpusWords()
{
    std::vector<std::string> words;
    std::istringstream in(kCorpus);
    for (std::string w; in >> w;) words.push_back(w);
    return words;
}

Learned learnMerges(std::map<std::vector<std::string>, int> words, int count)
{
    Learned out;
    for (int step = 0; step < count; ++step) {
        std::map<std::pair<std::string, std::string>, int> pairs;
        for (const auto& [w, n] : words)
            for (std::size_t i = 0; i + 1 < w.size(); ++i) pairs[{w[i], w[i + 1]}] += n;
        std::pair<std::string, std::string> best;
        int bestCount = 1;
        for (const auto& [p, n] : pairs)
            if (n > bestCount) {
                bestCount = n;
                best = p;
            }
        if (bestCount < 2) break;
        out.merges.push_back(best);
        out.symbols.push_back(best.first + best.second);
        std::map<std::vector<std::string>, int> next;
        for (const auto& [w, n] : words) {
            std::vector<std::string> joined;
            for (std::size_t i = 0; i < w.size(); ++i) {
                if (i + 1 < w.size() && w[i] == best.first && w[i + 1] == best.second) {
                    joined.push_back(best.first + best.second);
                    ++i;
                } else {
                    joined.push_back(w[i]);
                }
            }
            next[joined] += n;
        }
        words = std::move(next);
    }
    return out;
}

std::string utf8Of(char32_t cp)
{
    std::string s;
    if (cp < 0x80) s += char(cp);
    else if (cp < 0x800) { s += char(0xC0 | (cp >> 6)); s += char(0x80 | (cp & 0x3F)); }
    else { s += char(0xE0 | (cp >> 12)); s += char(0x80 | ((cp >> 6) & 0x3F)); s += char(0x80 | (cp & 0x3F)); }
    return s;
}

std::string byteSymbol(unsigned char b)
{
    auto printable = [](int c) { return (c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF); };
    int next = 256;
    for (int c = 0; c < 256; ++c) {
        const int cp = printable(c) ? c : next++;
        if (c == b) return utf8Of(char32_t(cp));
    }
    return {};
}

std::vector<std::string> utf8Chars(const std::string& s)
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        const std::size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        out.push_back(s.substr(i, n));
        i += n;
    }
    return out;
}

nlohmann::json addedToken(int id, const std::string& content, bool special, bool lstrip, bool rstrip,
                                 bool singleWord, bool normalized)
{
    return {{"id", id}, {"content", content}, {"single_word", singleWord}, {"lstrip", lstrip},
            {"rstrip", rstrip}, {"normalized", normalized}, {"special", special}};
}

nlohmann::json bosTemplate(const std::string& bos, int id)
{
    return {{"type", "TemplateProcessing"},
            {"single", {{{"SpecialToken", {{"id", bos}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
            {"pair", {{{"SpecialToken", {{"id", bos}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                      {{"SpecialToken", {{"id", bos}, {"type_id", 1}}}}, {{"Sequence", {{"id", "B"}, {"type_id", 1}}}}}},
            {"special_tokens", {{bos, {{"id", bos}, {"ids", {id}}, {"tokens", {bos}}}}}}};
}

nlohmann::json byteLevelTokenizer(const std::string& kind)
{
    // 1. Vocabulary: the 256 bytes in byte order, then what learning made from space-led words.
    nlohmann::json vocab = nlohmann::json::object();
    int id = 0;
    for (int b = 0; b < 256; ++b) vocab[byteSymbol(static_cast<unsigned char>(b))] = id++;
    std::map<std::vector<std::string>, int> words;
    bool first = true;
    for (const std::string& w : corpusWords()) {
        std::vector<std::string> symbols;
        if (!first) symbols.push_back(byteSymbol(' '));
        for (char c : w) symbols.push_back(byteSymbol(static_cast<unsigned char>(c)));
        ++words[symbols];
        first = false;
    }
    const Learned learned = learnMerges(words, 120);
    for (const std::string& s : learned.symbols)
        if (!vocab.contains(s)) vocab[s] = id++;
    nlohmann::json merges = nlohmann::json::array();
    for (const auto& [a, b] : learned.merges) merges.push_back(a + " " + b);

    // 2. Added tokens after the vocabulary, as Llama 3 numbers its specials.
    const int bos = id;
    nlohmann::json added = nlohmann::json::array();
    added.push_back(addedToken(bos, "<|begin_of_text|>", true));
    added.push_back(addedToken(bos + 1, "<|end_of_text|>", true));
    added.push_back(addedToken(bos + 2, "<|eot_id|>", true));
    added.push_back(addedToken(bos + 3, "<mask>", true, true, true));           // takes the spaces around it
    added.push_back(addedToken(bos + 4, "<sep>", false, false, false, true, true));  // a whole word only; normalized

    nlohmann::json t = {{"version", "1.0"}, {"truncation", nullptr}, {"padding", nullptr}, {"added_tokens", added}};
    const nlohmann::json byteLevel = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}};
    t["normalizer"] = nullptr;
    t["post_processor"] = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", false}, {"use_regex", true}};
    if (kind == "llama3") {
        t["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", {{{"type", "Split"}, {"pattern", {{"Regex", kLlama3Pattern}}},
                                                                         {"behavior", "Isolated"}, {"invert", false}}, byteLevel}}};
        t["post_processor"] = {{"type", "Sequence"}, {"processors", {t["post_processor"], bosTemplate("<|begin_of_text|>", bos)}}};
    } else if (kind == "qwen2") {
        t["normalizer"] = {{"type", "NFC"}};
        t["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", {{{"type", "Split"}, {"pattern", {{"Regex", kQwen2Pattern}}},
                                                                         {"behavior", "Isolated"}, {"invert", false}}, byteLevel}}};
    } else {  // smollm
        nlohmann::json withRegex = byteLevel;
        withRegex["use_regex"] = true;
        t["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", {{{"type", "Digits"}, {"individual_digits", true}}, withRegex}}};
    }
    t["decoder"] = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}};
    t["model"] = {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", nullptr},
                  {"end_of_word_suffix", nullptr}, {"fuse_unk", false}, {"byte_fallback", false},
                  {"ignore_merges", kind == "llama3"}, {"vocab", vocab}, {"merges", merges}};
    return t;
}

nlohmann::json sentencePieceTokenizer(const std::string& kind)
{
    const std::string meta = "\xE2\x96\x81";  // '▁'
    // 1. Vocabulary in Llama 2's order: <unk>, <s>, </s>, the 256 byte tokens, the corpus's characters, merges.
    nlohmann::json vocab = nlohmann::json::object();
    int id = 0;
    for (const char* s : {"<unk>", "<s>", "</s>"}) vocab[s] = id++;
    for (int b = 0; b < 256; ++b) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "<0x%02X>", b);
        vocab[hex] = id++;
    }
    std::map<std::vector<std::string>, int> words;
    std::set<std::string> alphabet = {meta};
    for (const std::string& w : corpusWords()) {
        std::vector<std::string> symbols = {meta};
        for (const std::string& c : utf8Chars(w)) {
            symbols.push_back(c);
            alphabet.insert(c);
        }
        ++words[symbols];
    }
    for (const std::string& c : alphabet) vocab[c] = id++;
    const Learned learned = learnMerges(words, 120);
    for (const std::string& s : learned.symbols)
        if (!vocab.contains(s)) vocab[s] = id++;
    nlohmann::json merges = nlohmann::json::array();
    for (const auto& [a, b] : learned.merges) merges.push_back({a, b});

    nlohmann::json added = nlohmann::json::array();
    added.push_back(addedToken(0, "<unk>", true));
    added.push_back(addedToken(1, "<s>", true));
    added.push_back(addedToken(2, "</s>", true));
    nlohmann::json t = {{"version", "1.0"}, {"truncation", nullptr}, {"padding", nullptr}, {"added_tokens", added}};
    if (kind == "mistral") {
        t["normalizer"] = nullptr;
        t["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", meta}, {"prepend_scheme", "first"}, {"split", false}};
    } else {
        t["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "Prepend"}, {"prepend", meta}},
                                                                 {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", meta}}}}};
        t["pre_tokenizer"] = nullptr;
    }
    t["post_processor"] = bosTemplate("<s>", 1);
    t["decoder"] = {{"type", "Sequence"}, {"decoders", {{{"type", "Replace"}, {"pattern", {{"String", meta}}}, {"content", " "}},
                                                        {{"type", "ByteFallback"}}, {{"type", "Fuse"}},
                                                        {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
    t["model"] = {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", "<unk>"}, {"continuing_subword_prefix", nullptr},
                  {"end_of_word_suffix", nullptr}, {"fuse_unk", true}, {"byte_fallback", kind != "nofallback"},
                  {"ignore_merges", false}, {"vocab", vocab}, {"merges", merges}};
    return t;
}

nlohmann::json tokenizerJson(const std::string& kind)
{
    return isByteLevel(kind) ? byteLevelTokenizer(kind) : sentencePieceTokenizer(kind);
}

std::string tokenizerText(const std::string& kind) { return tokenizerJson(kind).dump(1); }

std::string checksum(const std::string& text)
{
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    char out[17];
    std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
    return out;
}

int idOf(const nlohmann::json& tokenizer, const std::string& spelling)
{
    if (tokenizer["model"]["vocab"].contains(spelling)) return tokenizer["model"]["vocab"][spelling].get<int>();
    for (const auto& a : tokenizer["added_tokens"])
        if (a["content"] == spelling) return a["id"].get<int>();
    return -1;
}

int vocabularySize(const nlohmann::json& tokenizer)
{
    int n = 0;
    for (const auto& [s, id] : tokenizer["model"]["vocab"].items()) n = std::max(n, id.get<int>() + 1);
    for (const auto& a : tokenizer["added_tokens"]) n = std::max(n, a["id"].get<int>() + 1);
    return n;
}

} // namespace tinytok
