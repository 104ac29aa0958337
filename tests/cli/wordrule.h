#pragma once
// Clark et al.'s rule for word attention worked pair by pair on printed token weights, independently of
// core/analysis/wordattention: word i to word j is the mean over i's query tokens of their summed weight on
// j's key tokens. The CLI's word arrays must equal it.
#include <nlohmann/json.hpp>

#include "numericcheck.h"

namespace clitest {

// `tokens` [layer][head][query][key], `words` [layer][head][query word][key word].
inline numericcheck::Worst againstWordRule(const nlohmann::json& words, const nlohmann::json& tokens,
                                           const std::vector<int>& queryWord, const std::vector<int>& keyWord)
{
    numericcheck::Worst worst;
    if (words.size() != tokens.size()) worst.fail("another number of layers");
    for (std::size_t l = 0; l < tokens.size() && l < words.size(); ++l)
        for (std::size_t h = 0; h < tokens[l].size(); ++h) {
            worst.label("layer %zu head %zu", l, h);
            const nlohmann::json& a = tokens[l][h];
            const nlohmann::json& w = words[l][h];
            for (std::size_t i = 0; i < w.size(); ++i)
                for (std::size_t j = 0; j < w[i].size(); ++j) {
                    double total = 0.0;
                    int queries = 0;
                    for (std::size_t q = 0; q < a.size(); ++q) {
                        if (queryWord[q] != int(i)) continue;
                        ++queries;
                        for (std::size_t k = 0; k < a[q].size(); ++k)
                            if (keyWord[k] == int(j)) total += a[q][k].is_number() ? a[q][k].get<double>() : NAN;
                    }
                    const double want = queries > 0 ? total / queries : NAN;
                    worst.add(w[i][j].is_number() ? w[i][j].get<double>() : NAN, want, long(i), long(j));
                }
        }
    return worst;
}

} // namespace clitest
