#pragma once
// A tokenizer that puts fixed special tokens around another's output, as Hugging Face's tokenizers add them
// by default: BART's encoder reads <s> … </s>. The display strings of the added ids are the inner
// tokenizer's, and everything else (vocabulary, display of any id, kind) is the inner tokenizer's too.
#include <algorithm>
#include <memory>
#include <vector>

#include "core/text/tokenizer.h"
#include "core/text/words.h"

namespace attnscope {

class SpecialTokensTokenizer final : public Tokenizer {
public:
    SpecialTokensTokenizer(std::shared_ptr<const Tokenizer> inner, std::vector<int> prefix, std::vector<int> suffix)
        : m_inner(std::move(inner)), m_prefix(std::move(prefix)), m_suffix(std::move(suffix))
    {
    }

    Result<TokenizedText> encode(std::string_view utf8) const override
    {
        Result<TokenizedText> body = m_inner->encode(utf8);
        if (!body) return body;
        TokenizedText out;
        out.ids.reserve(body->ids.size() + m_prefix.size() + m_suffix.size());
        for (int id : m_prefix) out.addSpecial(id, m_inner->displayToken(id));
        out.ids.insert(out.ids.end(), body->ids.begin(), body->ids.end());
        out.tokens.insert(out.tokens.end(), body->tokens.begin(), body->tokens.end());
        out.spans.insert(out.spans.end(), body->spans.begin(), body->spans.end());
        for (int id : m_suffix) out.addSpecial(id, m_inner->displayToken(id));
        return Result<TokenizedText>::ok(std::move(out));
    }
    // The inner tokenizer's reading of the other ids; the added ones are special and read as nothing.
    DecodedText decodeWithSpans(const std::vector<int>& ids) const override
    {
        return decodeWithout(*m_inner, ids, [this](int id) {
            return std::find(m_prefix.begin(), m_prefix.end(), id) != m_prefix.end() ||
                   std::find(m_suffix.begin(), m_suffix.end(), id) != m_suffix.end();
        });
    }
    int vocabSize() const override { return m_inner->vocabSize(); }
    std::string displayToken(int id) const override { return m_inner->displayToken(id); }
    std::string kind() const override { return m_inner->kind(); }
    int maskTokenId() const override { return m_inner->maskTokenId(); }

    // The tokenizer without the added tokens.
    const std::shared_ptr<const Tokenizer>& inner() const { return m_inner; }

private:
    std::shared_ptr<const Tokenizer> m_inner;
    std::vector<int> m_prefix, m_suffix;
};

} // namespace attnscope
