// Reading a BPE tokenizer's files: GPT-2's vocab.json and merges.txt, and tokenizer.json (with
// tokenizer_config.json) for GPT-2's tables or for a whole Hugging Face pipeline.
#include <nlohmann/json.hpp>

#include "core/text/bpetables.h"
#include "core/text/filetext.h"

namespace attnscope {

namespace {

constexpr std::size_t kMaxTokenizerConfigBytes = 16u << 20;  // chat templates make some large

// Reads the symbol -> id object of vocab.json or tokenizer.json's model.vocab.
Status readVocab(const nlohmann::json& object, const std::string& file,
                      std::vector<std::pair<std::string, long long>>& vocab)
{
    if (!object.is_object()) return Status::failure("the vocabulary in '" + file + "' is not a JSON object of token -> id.");
    vocab.reserve(object.size());
    for (const auto& [symbol, id] : object.items()) {
        if (!id.is_number_integer())
            return Status::failure("the vocabulary in '" + file + "' gives the token '" + symbol + "' an id that is not an integer.");
        vocab.emplace_back(symbol, id.get<long long>());
    }
    return {};
}

Status parseMergeLine(std::string_view line, std::pair<std::string, std::string>& merge)
{
    const std::size_t space = line.find(' ');
    if (space == std::string_view::npos || space == 0 || space + 1 >= line.size() ||
        line.find(' ', space + 1) != std::string_view::npos)
        return Status::failure("not two symbols separated by one space");
    merge = {std::string(line.substr(0, space)), std::string(line.substr(space + 1))};
    return {};
}

// model.vocab and model.merges of a tokenizer.json (merges as "a b" strings in older files and ["a", "b"]
// pairs in newer ones), or a sentence naming the file.
Status readModelTables(const nlohmann::json& model, const std::string& path,
                            std::vector<std::pair<std::string, long long>>& vocab,
                            std::vector<std::pair<std::string, std::string>>& merges, std::vector<std::size_t>& lines)
{
    if (!model.contains("vocab") || !model.contains("merges") || !model["merges"].is_array())
        return Status::failure("'" + path + "' lacks model.vocab or the model.merges list.");
    if (Status problem = readVocab(model["vocab"], path, vocab); !problem.ok()) return problem;
    std::size_t index = 0;
    for (const nlohmann::json& entry : model["merges"]) {
        ++index;
        std::pair<std::string, std::string> merge;
        Status problem;
        if (entry.is_string()) problem = parseMergeLine(entry.get_ref<const std::string&>(), merge);
        else if (entry.is_array() && entry.size() == 2 && entry[0].is_string() && entry[1].is_string())
            merge = {entry[0].get<std::string>(), entry[1].get<std::string>()};
        else problem = Status::failure("neither an \"a b\" string nor a pair of strings");
        if (!problem.ok()) return Status::failure("merge " + std::to_string(index) + " in '" + path + "' is " + problem.error() + ".");
        merges.push_back(std::move(merge));
        lines.push_back(index);
    }
    return {};
}


} // namespace

Result<std::shared_ptr<const BpeTokenizer>> BpeTokenizer::fromVocabAndMerges(const std::string& vocabPath,
                                                                                     const std::string& mergesPath)
{
    using R = Result<std::shared_ptr<const BpeTokenizer>>;
    Tables t;
    t.vocabFile = vocabPath;
    t.mergesFile = mergesPath;

    Result<std::string> vocabText = readSmallFile(vocabPath, kMaxTokenizerFileBytes);
    if (!vocabText) return R::fail(vocabText.error());
    Result<nlohmann::json> vocab = parseJsonObject(*vocabText, "'" + vocabPath + "'",
                                                   "the vocabulary in '" + vocabPath + "' is not a JSON object of token -> id.");
    if (!vocab) return R::fail(vocab.error());
    if (Status problem = readVocab(*vocab, vocabPath, t.vocab); !problem.ok()) return R::fail(problem.error());

    Result<std::string> mergesText = readSmallFile(mergesPath, kMaxTokenizerFileBytes);
    if (!mergesText) return R::fail(mergesText.error());
    std::string_view rest = *mergesText;
    for (std::size_t lineNo = 1; !rest.empty(); ++lineNo) {
        const std::size_t end = rest.find('\n');
        std::string_view line = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        // The first line is a "#version: 0.2" comment; blank lines (the last one) carry nothing.
        if (line.empty() || (lineNo == 1 && line.starts_with("#version"))) continue;
        std::pair<std::string, std::string> merge;
        if (Status problem = parseMergeLine(line, merge); !problem.ok())
            return R::fail("line " + std::to_string(lineNo) + " of '" + mergesPath + "' is " + problem.error() + ".");
        t.merges.push_back(std::move(merge));
        t.mergeLines.push_back(lineNo);
    }
    return build(std::move(t));
}


// tokenizer.json's document and its BPE model's two tables, or a sentence naming the file.
Status BpeTokenizer::readBpeModel(const std::string& path, Tables& t, nlohmann::json& doc)
{
    t.vocabFile = path;
    t.mergesFile = path;
    Result<nlohmann::json> read = readJsonObject(path, kMaxTokenizerFileBytes);
    if (!read) return Status::failure(read.error());
    doc = std::move(*read);
    if (!doc.contains("model") || !doc["model"].is_object()) return Status::failure("'" + path + "' has no \"model\" object, so it is not a tokenizer.json.");
    const nlohmann::json& model = doc["model"];
    if (model.contains("type") && model["type"] != "BPE")
        return Status::failure("'" + path + "' describes a " + quoteJsonValue(model["type"]) +
                               " tokenizer; AttnScope reads byte-level BPE only, or SentencePiece-style BPE in a Llama-family folder.");
    return readModelTables(model, path, t.vocab, t.merges, t.mergeLines);
}

Result<std::shared_ptr<const BpeTokenizer>> BpeTokenizer::fromTokenizerJson(const std::string& path)
{
    Tables t;
    nlohmann::json doc;
    if (Status problem = readBpeModel(path, t, doc); !problem.ok()) return Result<std::shared_ptr<const BpeTokenizer>>::fail(problem.error());
    return build(std::move(t));
}

Result<std::shared_ptr<const BpeTokenizer>> BpeTokenizer::fromTokenizerFiles(const std::string& path, const std::string& configPath)
{
    using R = Result<std::shared_ptr<const BpeTokenizer>>;
    Tables t;
    t.gpt2 = false;
    nlohmann::json doc;
    if (Status problem = readBpeModel(path, t, doc); !problem.ok()) return R::fail(problem.error());
    const nlohmann::json& model = doc["model"];
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
        if (model.contains(key) && !model[key].is_null() && model[key] != "")
            return R::fail("'" + path + "' sets the BPE model's \"" + key + "\", which AttnScope does not implement.");
    auto flag = [&model](const char* key) { return model.contains(key) && model[key].is_boolean() && model[key].get<bool>(); };
    t.byteFallback = flag("byte_fallback");
    t.fuseUnknown = flag("fuse_unk");
    t.ignoreMerges = flag("ignore_merges");
    if (model.contains("unk_token") && model["unk_token"].is_string()) t.unknown = model["unk_token"].get<std::string>();

    nlohmann::json config;
    if (!configPath.empty()) {
        Result<nlohmann::json> c = readJsonObject(configPath, kMaxTokenizerConfigBytes);
        if (!c) return R::fail(c.error());
        config = std::move(*c);
    }
    // Spelling -> id over the model's vocabulary, for the added tokens and the BOS token.
    std::unordered_map<std::string, int> ids;
    for (const auto& [symbol, id] : t.vocab)
        if (id >= 0 && id <= kMaxBpeTokenId) ids.emplace(symbol, static_cast<int>(id));
    Result<TokenizerPipeline> pipeline = readPipeline(doc, path, configPath.empty() ? nullptr : &config, configPath,
                                                      [&ids](const std::string& s) {
                                                          const auto it = ids.find(s);
                                                          return it == ids.end() ? -1 : it->second;
                                                      });
    if (!pipeline) return R::fail(pipeline.error());
    t.pipeline = std::move(*pipeline);
    return build(std::move(t));
}

} // namespace attnscope
