#pragma once
// The built-in corpus: simple English generated deterministically from the grammar in lexicon.h, written
// so that the heads a small model needs to predict it are the heads people come to see:
//   - pronouns whose continuation depends on their antecedent ("the dog sat on the rug because it barked":
//     only a dog barks, so the model must look back from "it" to the dog, not to the rug);
//   - agreement across intervening words ("the dogs near the old house are hungry");
//   - repeated spans, including lists of random words said twice, so that copying pays and an induction
//     head (find the earlier occurrence of this token, predict what came after it) forms;
//   - every word of the lexicon, in sentences of a dozen shapes.
// One document per line; the trainer starts each with the beginning-of-text token.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope::train {

struct CorpusOptions {
    int documents = 60000;
    std::uint64_t seed = 1;
};

// Lower-case words and punctuation separated by single spaces, one document per line, '\n' after each.
std::string generateCorpus(const CorpusOptions& options);

// The words and punctuation of one line of such text (or of any text), split at white space.
std::vector<std::string> corpusWords(std::string_view line);

// Pairs of (animal, surface) that the corpus never puts together in the "because it" shape, so the
// pronoun head can be measured on sentences the model was not trained on. About one pair in five.
bool isHeldOutPair(std::string_view animal, std::string_view surface);

// "the <animal> <posture> on the <surface> because it <sound> ." for every held-out pair (one posture and
// sound each, chosen deterministically): the pronoun probe sentences, with the two nouns' positions.
struct PronounProbe {
    std::string text;
    std::string animal, surface;
    int animalWord = 0, surfaceWord = 0, pronounWord = 0;  // word positions in text (0-based, no BOS)
};
std::vector<PronounProbe> pronounProbes();

// Sentences of the corpus's shapes built only from held-out pairs, for measuring heads on unseen text.
std::vector<std::string> heldOutSentences(int count, std::uint64_t seed);

} // namespace attnscope::train
