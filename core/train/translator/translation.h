#pragma once
// A parallel corpus for the built-in translator: short English sentences from the lexicon's words, each
// with its translation into a small invented language and the gold word alignment between them, so that
// an encoder-decoder's cross-attention can be compared with the truth.
//
// The invented language is regular on purpose (the model is tiny) but does not keep English word order,
// so the alignment is not a diagonal:
//   - "the" is dropped;
//   - an adjective follows its noun:            "the old dog"          -> dog old
//   - the plural is a suffix word after the noun: "the dogs"           -> dog ri
//   - a preposition follows its noun phrase:    "on the mat"           -> mat on
//   - the verb ends its clause, after the subject, the object, the place and the adverb (S O P A V):
//       "the old dog saw the red ball ."  -> dog old ball red saw .
//       "the cat sat quietly on the mat ." -> cat mat on quietly sat .
//   - two clauses joined by "and", "but" or "because" are each reordered on their own, the joining word
//     stays between them.
// Every English content word has its own target word (each verb form its own, "saw" and "sees" differ;
// a plural noun is its singular's word plus "ri"), made of two consonant-vowel syllables ("kapo"), distinct
// from each other and from every English word of the lexicon.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace attnscope::train {

struct TranslationPair {
    std::string source, target;       // lower-case words separated by single spaces, ending in " ."
    std::vector<int> alignment;       // per target token: the source token (0-based) it translates, or -1
    std::vector<bool> targetContent;  // per target token: a content word, counted when alignment is measured
};
// Alignment in this grammar: a content word points at the English word it translates; the plural suffix
// "ri" points at the plural noun whose number it carries; a joining word at its English twin; "." at ".".
// No target token translates nothing here, so -1 does not occur yet; readers must still accept it.
// Content words are nouns, names, verbs, adjectives, adverbs and prepositions; "ri", the joining words
// and "." are not.

struct TranslationOptions {
    int pairs = 100000;
    std::uint64_t seed = 1;
};

// Training pairs, none containing a held-out (adjective, noun) combination. 3 to 14 English tokens each.
std::vector<TranslationPair> generateTranslationPairs(const TranslationOptions& options);

// About one (adjective, noun) combination in five, by a fixed hash of the two words (the noun singular),
// never appears in training, so translation of unseen combinations can be measured.
bool isHeldOutAdjectiveNoun(std::string_view adjective, std::string_view noun);

// Test pairs in which every adjective stands with a held-out noun, at least one per sentence.
std::vector<TranslationPair> heldOutTranslationPairs(int count, std::uint64_t seed);

// The translation of one English sentence of the grammar's shapes: clause [joining-word clause] " .", a
// clause being subject verb [object] [adverb] [preposition noun-phrase], a noun phrase a name or
// "the [adjective] noun". Checks the word order and that transitive verbs (only) have an object; does not
// check agreement. A sentence outside the grammar or a word outside the vocabulary fails with a sentence.
Result<TranslationPair> translateSentence(std::string_view english);

// The dictionary as text: "english<TAB>target\n" for every English word the grammar uses except "the"
// (which the target drops) and ".", sorted by the English word. A plural noun's target is two tokens,
// "kapo ri"; every target word of every translation is in the second column.
std::string translationLexiconTsv();

// Every token either side can contain, "." included, sorted.
std::vector<std::string> translationSourceWords();
std::vector<std::string> translationTargetWords();

} // namespace attnscope::train
