// Reading a tokenizer.json's stages before and after the model (see pipeline.h), and tokenizer_config.json's
// say on the BOS and EOS tokens.
#include "core/text/pipeline.h"

#include "core/text/filetext.h"

namespace attnscope {

namespace {

constexpr int kMaxTokenId = (1 << 20) - 1;
constexpr int kMaxNesting = 8;  // Sequences inside Sequences; real files use one level

// A member or null, without copying it: copying a hostile file's deeply nested value would recurse once
// per level.
const nlohmann::json& member(const nlohmann::json& j, const char* key)
{
    static const nlohmann::json none;
    if (!j.is_object()) return none;
    const auto it = j.find(key);
    return it == j.end() ? none : *it;
}

// Collects the first problem, as a sentence naming the file.
class Reader {
public:
    explicit Reader(std::string file) : m_file(std::move(file)) {}
    bool ok() const { return m_problem.empty(); }
    const std::string& problem() const { return m_problem; }
    void fail(const std::string& what)
    {
        if (m_problem.empty()) m_problem = "'" + m_file + "' " + what;
    }
    // A typed component's "type", or "" after failing.
    std::string type(const nlohmann::json& j, const char* component)
    {
        if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) {
            fail(std::string("has a ") + component + " without a \"type\".");
            return {};
        }
        return j["type"].get<std::string>();
    }
    bool flag(const nlohmann::json& j, const char* key, bool fallback)
    {
        const auto it = j.find(key);
        if (it == j.end() || it->is_null()) return fallback;
        if (!it->is_boolean()) fail(std::string("gives \"") + key + "\" as " + quoteJsonValue(*it) + ", which is not true or false.");
        return it->is_boolean() ? it->get<bool>() : fallback;
    }
    std::string string(const nlohmann::json& j, const char* key, const char* component)
    {
        const auto it = j.find(key);
        if (it == j.end() || !it->is_string()) {
            fail(std::string("has a ") + component + " without a \"" + key + "\" string.");
            return {};
        }
        return it->get<std::string>();
    }
    // {"String": "..."} or {"Regex": "..."}, compiled.
    std::optional<Regex> pattern(const nlohmann::json& j, const char* component)
    {
        const auto it = j.find("pattern");
        const bool literal = it != j.end() && it->is_object() && it->contains("String") && (*it)["String"].is_string();
        const bool regex = it != j.end() && it->is_object() && it->contains("Regex") && (*it)["Regex"].is_string();
        if (!literal && !regex) {
            fail(std::string("has a ") + component + " whose pattern is neither {\"String\": ...} nor {\"Regex\": ...}.");
            return std::nullopt;
        }
        const std::string text = (*it)[literal ? "String" : "Regex"].get<std::string>();
        Result<Regex> r = Regex::compile(text, literal);
        if (!r) {
            fail(std::string("has a ") + component + " pattern that AttnScope cannot use: " + r.error());
            return std::nullopt;
        }
        return std::move(*r);
    }

private:
    std::string m_file;
    std::string m_problem;
};

void readNormalizer(Reader& r, const nlohmann::json& j, std::vector<NormalizerStep>& steps, int depth = 0)
{
    if (j.is_null() || !r.ok()) return;
    const std::string type = r.type(j, "normalizer");
    NormalizerStep step;
    if (type == "Sequence" && depth >= kMaxNesting) return r.fail("nests its normalizers too deep.");
    if (type == "Sequence") {
        const auto list = j.find("normalizers");
        if (list == j.end() || !list->is_array()) return r.fail("has a Sequence normalizer without a \"normalizers\" list.");
        for (const nlohmann::json& n : *list) readNormalizer(r, n, steps, depth + 1);
        return;
    }
    if (type == "Prepend") {
        step.kind = NormalizerStep::Kind::Prepend;
        step.text = r.string(j, "prepend", "Prepend normalizer");
    } else if (type == "Replace") {
        step.kind = NormalizerStep::Kind::Replace;
        step.pattern = r.pattern(j, "Replace normalizer");
        step.text = r.string(j, "content", "Replace normalizer");
    } else if (type == "NFC") {
        step.kind = NormalizerStep::Kind::Nfc;
    } else if (type == "NFD") {
        step.kind = NormalizerStep::Kind::Nfd;
    } else if (type == "NFKC") {
        step.kind = NormalizerStep::Kind::Nfkc;
    } else if (type == "NFKD") {
        step.kind = NormalizerStep::Kind::Nfkd;
    } else if (type == "Strip") {
        step.kind = NormalizerStep::Kind::Strip;
        step.left = r.flag(j, "strip_left", false);
        step.right = r.flag(j, "strip_right", false);
    } else if (type == "Precompiled") {
        step.kind = NormalizerStep::Kind::Precompiled;
        const std::string encoded = r.string(j, "precompiled_charsmap", "Precompiled normalizer");
        if (!r.ok()) return;
        Result<std::string> bytes = decodeBase64(encoded);
        if (!bytes) return r.fail("has a Precompiled normalizer whose map is not base64.");
        Result<CharsMap> map = CharsMap::parse(*bytes);
        if (!map) return r.fail("has a Precompiled normalizer that cannot be used: " + map.error());
        step.charsMap = std::make_shared<const CharsMap>(std::move(*map));
    } else if (!type.empty()) {
        return r.fail("uses the normalizer " + quoteJsonValue(nlohmann::json(type)) +
                      ", which AttnScope does not implement (it implements Sequence, Prepend, Replace, Strip, Precompiled, "
                      "NFC, NFD, NFKC and NFKD).");
    }
    if (r.ok()) steps.push_back(std::move(step));
}

std::optional<SplitBehavior> behaviorOf(const nlohmann::json& j)
{
    if (!j.is_string()) return std::nullopt;
    const std::string b = j.get<std::string>();
    if (b == "Removed") return SplitBehavior::Removed;
    if (b == "Isolated") return SplitBehavior::Isolated;
    if (b == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
    if (b == "MergedWithNext") return SplitBehavior::MergedWithNext;
    if (b == "Contiguous") return SplitBehavior::Contiguous;
    return std::nullopt;
}

void readPreTokenizer(Reader& r, const nlohmann::json& j, std::vector<PreTokenizerStep>& steps, int depth = 0)
{
    if (j.is_null() || !r.ok()) return;
    const std::string type = r.type(j, "pre_tokenizer");
    if (type == "Sequence" && depth >= kMaxNesting) return r.fail("nests its pre_tokenizers too deep.");
    if (type == "Sequence") {
        const auto list = j.find("pretokenizers");
        if (list == j.end() || !list->is_array()) return r.fail("has a Sequence pre_tokenizer without a \"pretokenizers\" list.");
        for (const nlohmann::json& p : *list) readPreTokenizer(r, p, steps, depth + 1);
        return;
    }
    if (!steps.empty() && steps.back().kind == PreTokenizerStep::Kind::ByteLevel && !type.empty())
        return r.fail("has a " + type + " pre_tokenizer after ByteLevel, which AttnScope does not implement.");
    PreTokenizerStep step;
    if (type == "Split") {
        step.kind = PreTokenizerStep::Kind::Split;
        step.pattern = r.pattern(j, "Split pre_tokenizer");
        const std::optional<SplitBehavior> b = behaviorOf(member(j, "behavior"));
        if (!b) return r.fail("has a Split pre_tokenizer with an unknown \"behavior\".");
        step.behavior = *b;
        step.invert = r.flag(j, "invert", false);
    } else if (type == "ByteLevel") {
        step.kind = PreTokenizerStep::Kind::ByteLevel;
        step.addPrefixSpace = r.flag(j, "add_prefix_space", false);
        if (r.flag(j, "use_regex", true)) step.pattern = gpt2Pipeline().preTokenizers.back().pattern;
    } else if (type == "Digits") {
        step.kind = PreTokenizerStep::Kind::Digits;
        step.pattern = *Regex::compile(r.flag(j, "individual_digits", false) ? R"(\p{N})" : R"(\p{N}+)");
    } else if (type == "Metaspace") {
        step.kind = PreTokenizerStep::Kind::Metaspace;
        step.replacement = r.string(j, "replacement", "Metaspace pre_tokenizer");
        const nlohmann::json& given = member(j, "prepend_scheme");
        const std::string scheme = given.is_null() ? std::string("always") : given.is_string() ? given.get<std::string>() : std::string("?");
        if (scheme == "always") step.prepend = PreTokenizerStep::Prepend::Always;
        else if (scheme == "first") step.prepend = PreTokenizerStep::Prepend::First;
        else if (scheme == "never") step.prepend = PreTokenizerStep::Prepend::Never;
        else return r.fail("has a Metaspace pre_tokenizer with the unknown prepend_scheme " + quoteJsonValue(given) + ".");
        if (!r.flag(j, "add_prefix_space", true)) step.prepend = PreTokenizerStep::Prepend::Never;
        if (r.flag(j, "split", true) && r.ok()) step.pattern = *Regex::compile(step.replacement, true);
    } else if (type == "WhitespaceSplit") {
        step.kind = PreTokenizerStep::Kind::WhitespaceSplit;
        step.pattern = *Regex::compile(R"(\s+)");
    } else if (!type.empty()) {
        return r.fail("uses the pre_tokenizer " + quoteJsonValue(nlohmann::json(type)) +
                      ", which AttnScope does not implement (it implements Sequence, Split, ByteLevel, Digits, Metaspace and "
                      "WhitespaceSplit).");
    }
    if (r.ok()) steps.push_back(std::move(step));
}

// The special tokens a post-processor puts before and after a single sequence.
void readPostProcessor(Reader& r, const nlohmann::json& j, std::vector<int>& prefix, std::vector<int>& suffix, int depth = 0)
{
    if (j.is_null() || !r.ok()) return;
    const std::string type = r.type(j, "post_processor");
    auto readIds = [&r](const nlohmann::json& ids, std::vector<int>& out) {
        if (!ids.is_array()) return r.fail("has a post_processor whose special token has no \"ids\" list.");
        for (const nlohmann::json& id : ids) {
            if (!id.is_number_integer() || id.get<long long>() < 0 || id.get<long long>() > kMaxTokenId)
                return r.fail("has a post_processor special token id " + quoteJsonValue(id) + " outside 0 to " + std::to_string(kMaxTokenId) + ".");
            out.push_back(id.get<int>());
        }
    };
    if (type == "Sequence" && depth >= kMaxNesting) return r.fail("nests its post_processors too deep.");
    if (type == "Sequence") {
        const auto list = j.find("processors");
        if (list == j.end() || !list->is_array()) return r.fail("has a Sequence post_processor without a \"processors\" list.");
        for (const nlohmann::json& p : *list) readPostProcessor(r, p, prefix, suffix, depth + 1);
    } else if (type == "TemplateProcessing") {
        // "single": [{"SpecialToken": {"id": "<s>"}}, {"Sequence": {"id": "A"}}]; ids from "special_tokens".
        const auto single = j.find("single");
        const auto specials = j.find("special_tokens");
        if (single == j.end() || !single->is_array() || specials == j.end() || !specials->is_object())
            return r.fail("has a TemplateProcessing post_processor without its \"single\" template and \"special_tokens\".");
        bool afterSequence = false;
        for (const nlohmann::json& piece : *single) {
            if (piece.is_object() && piece.contains("Sequence")) {
                afterSequence = true;
                continue;
            }
            const nlohmann::json* name = nullptr;
            if (const auto token = piece.is_object() ? piece.find("SpecialToken") : piece.end();
                token != piece.end() && token->is_object() && token->contains("id"))
                name = &(*token)["id"];
            if (!name || !name->is_string() || !specials->contains(name->get<std::string>()) ||
                !(*specials)[name->get<std::string>()].is_object())
                return r.fail("has a TemplateProcessing template naming a special token it does not define.");
            readIds(member((*specials)[name->get<std::string>()], "ids"), afterSequence ? suffix : prefix);
        }
    } else if (type == "RobertaProcessing" || type == "BertProcessing") {
        // "cls": ["<s>", 0], "sep": ["</s>", 2] around the sequence.
        for (const char* key : {"cls", "sep"}) {
            const auto pair = j.find(key);
            if (pair == j.end() || !pair->is_array() || pair->size() != 2)
                return r.fail("has a " + type + " post_processor without its \"" + key + "\" pair.");
            readIds(nlohmann::json::array({(*pair)[1]}), std::string(key) == "cls" ? prefix : suffix);
        }
    } else if (type != "ByteLevel" && !type.empty()) {  // ByteLevel only trims offsets, which AttnScope does not keep
        r.fail("uses the post_processor " + quoteJsonValue(nlohmann::json(type)) +
               ", which AttnScope does not implement (it implements TemplateProcessing, ByteLevel, Roberta and Bert).");
    }
}

void readAddedTokens(Reader& r, const nlohmann::json& j, std::vector<AddedToken>& tokens,
                     const std::function<int(const std::string&)>& idOf)
{
    if (j.is_null()) return;
    if (!j.is_array()) return r.fail("gives \"added_tokens\" as something other than a list.");
    for (const nlohmann::json& t : j) {
        if (!t.is_object() || !t.contains("content") || !t["content"].is_string() || !t.contains("id") ||
            !t["id"].is_number_integer())
            return r.fail("has an added token without a \"content\" string and an \"id\".");
        AddedToken a;
        a.content = t["content"].get<std::string>();
        const long long id = t["id"].get<long long>();
        if (id < 0 || id > kMaxTokenId)
            return r.fail("gives the added token '" + a.content + "' the id " + std::to_string(id) + ", outside 0 to " +
                          std::to_string(kMaxTokenId) + ".");
        // As Hugging Face does: a token the vocabulary already spells keeps the vocabulary's id.
        const int known = idOf(a.content);
        a.id = known >= 0 ? known : static_cast<int>(id);
        a.singleWord = r.flag(t, "single_word", false);
        a.lstrip = r.flag(t, "lstrip", false);
        a.rstrip = r.flag(t, "rstrip", false);
        a.special = r.flag(t, "special", false);
        a.normalized = r.flag(t, "normalized", !a.special);
        if (!a.content.empty()) tokens.push_back(std::move(a));
    }
}

// bos_token / eos_token in tokenizer_config.json: a string, or an object with its "content".
std::string specialTokenName(const nlohmann::json& config, const char* key)
{
    const auto it = config.find(key);
    if (it == config.end()) return {};
    if (it->is_string()) return it->get<std::string>();
    if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) return (*it)["content"].get<std::string>();
    return {};
}

} // namespace

Result<TokenizerPipeline> readPipeline(const nlohmann::json& doc, const std::string& path, const nlohmann::json* config,
                                       const std::string& configPath, const std::function<int(const std::string&)>& idOf)
{
    TokenizerPipeline p;
    Reader r(path);
    readAddedTokens(r, member(doc, "added_tokens"), p.addedTokens, idOf);
    readNormalizer(r, member(doc, "normalizer"), p.normalizers);
    readPreTokenizer(r, member(doc, "pre_tokenizer"), p.preTokenizers);
    readPostProcessor(r, member(doc, "post_processor"), p.prefix, p.suffix);
    if (!r.ok()) return Result<TokenizerPipeline>::fail(r.problem());

    // tokenizer_config.json's add_bos_token and add_eos_token, where given, decide those tokens.
    if (config && config->is_object()) {
        Reader c(configPath);
        auto decide = [&](const char* flag, const char* tokenKey, std::vector<int>& side) {
            const auto it = config->find(flag);
            if (it == config->end() || it->is_null()) return;
            const bool add = c.flag(*config, flag, false);
            const std::string name = specialTokenName(*config, tokenKey);
            int id = name.empty() ? -1 : idOf(name);
            for (const AddedToken& t : p.addedTokens)
                if (!name.empty() && t.content == name) id = t.id;
            side.clear();
            if (!add) return;
            if (id < 0) return c.fail(std::string("sets \"") + flag + "\" but its \"" + tokenKey + "\" is not a token of the vocabulary.");
            side.push_back(id);
        };
        decide("add_bos_token", "bos_token", p.prefix);
        decide("add_eos_token", "eos_token", p.suffix);
        if (!c.ok()) return Result<TokenizerPipeline>::fail(c.problem());
    }
    p.prepare();
    return Result<TokenizerPipeline>::ok(std::move(p));
}

} // namespace attnscope
