// The bodies of tinyneox.h's functions, compiled once into the tests' fixture library.
#include "tinyneox.h"

#include "fixturefiles.h"
#include "tinytokenizers.h"

namespace tinyneox {

nlohmann::json tokenizerJson()
{
    // The byte-level vocabulary and merges the Llama-family fixtures learn, inside Pythia's stages: NFC, then
    // ByteLevel with GPT-2's own split pattern (use_regex), no BOS; <|endoftext|> and two runs of spaces
    // (GPT-NeoX's tokenizer has added tokens for runs of spaces, not special, matched after normalising).
    nlohmann::json t = tinytok::byteLevelTokenizer("smollm");
    const int next = static_cast<int>(t["model"]["vocab"].size());
    t["normalizer"] = {{"type", "NFC"}};
    t["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
    t["post_processor"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
    t["added_tokens"] = nlohmann::json::array({tinytok::addedToken(next, "<|endoftext|>", true),
                                               tinytok::addedToken(next + 1, "<|padding|>", true),
                                               tinytok::addedToken(next + 2, "    ", false, false, false, false, true),
                                               tinytok::addedToken(next + 3, "   ", false, false, false, false, true)});
    return t;
}

int tokenizerVocabSize() { return tinytok::vocabularySize(tokenizerJson()); }

int vocabSize(const Spec& s) { return tokenizerVocabSize() + s.extraVocab; }

nlohmann::json config(const Spec& s)
{
    nlohmann::json c = {{"architectures", {"GPTNeoXForCausalLM"}}, {"model_type", "gpt_neox"}, {"hidden_size", s.dModel},
                        {"intermediate_size", s.dFF}, {"num_hidden_layers", s.layers}, {"num_attention_heads", s.heads},
                        {"max_position_embeddings", s.context}, {"layer_norm_eps", 1e-5}, {"hidden_act", s.hiddenAct},
                        {"use_parallel_residual", s.parallelResidual}, {"tie_word_embeddings", s.tied},
                        {"vocab_size", vocabSize(s)}, {"torch_dtype", "float16"}, {"bos_token_id", 0}, {"eos_token_id", 0},
                        {"rope_scaling", nullptr}, {"use_cache", true}};
    if (s.newNames) {
        c["partial_rotary_factor"] = s.rotaryPct;
        c["rope_theta"] = s.rotaryBase;
    } else {
        c["rotary_pct"] = s.rotaryPct;
        c["rotary_emb_base"] = s.rotaryBase;
    }
    if (!s.attentionBias) c["attention_bias"] = false;
    return c;
}

std::vector<NamedTensor> tensors(const Spec& s)
{
    const std::int64_t V = vocabSize(s), D = s.dModel, F = s.dFF;
    fixture::TensorList t(s.seed, D);
    t.add("gpt_neox.embed_in.weight", {V, D}, 1.0f);
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = "gpt_neox.layers." + std::to_string(l) + ".";
        t.norm(p + "input_layernorm");
        t.norm(p + "post_attention_layernorm");
        t.add(p + "attention.query_key_value.weight", {3 * D, D}, 0.5f);
        if (s.attentionBias) t.add(p + "attention.query_key_value.bias", {3 * D}, 0.3f);
        t.add(p + "attention.dense.weight", {D, D}, 0.3f);
        if (s.attentionBias) t.add(p + "attention.dense.bias", {D}, 0.2f);
        t.linear(p + "mlp.dense_h_to_4h", int(D), int(F), 0.4f);
        t.linear(p + "mlp.dense_4h_to_h", int(F), int(D), 0.3f);
        if (s.oldBuffers) {
            const int Dh = s.dModel / s.heads, R = static_cast<int>(Dh * s.rotaryPct);
            t.add(p + "attention.rotary_emb.inv_freq", {R / 2}, 1.0f);
            t.add(p + "attention.masked_bias", {1}, 1.0f);
        }
    }
    t.norm("gpt_neox.final_layer_norm");
    if (!s.tied) t.add("embed_out.weight", {V, D}, 0.5f);
    return t.tensors;
}

void writeJson(const fs::path& path, const nlohmann::json& j) { fixture::writeText(path, j.dump(1)); }

std::string writeFolder(const std::string& root, const std::string& name, const Spec& s)
{
    const fs::path dir = fs::path(root) / name;
    fs::create_directories(dir);
    writeJson(dir / "config.json", config(s));
    fixture::writeWeights(dir, tensors(s), s.dtype, s.shards);
    writeJson(dir / "tokenizer.json", tokenizerJson());
    writeJson(dir / "tokenizer_config.json", {{"tokenizer_class", "GPTNeoXTokenizer"}, {"bos_token", "<|endoftext|>"},
                                              {"eos_token", "<|endoftext|>"}, {"add_bos_token", false},
                                              {"model_max_length", s.context}});
    return dir.string();
}

std::string writeFolder(const QTemporaryDir& tmp, const std::string& name, const Spec& s)
{
    return writeFolder(tmp.path().toStdString(), name, s);
}

} // namespace tinyneox
