#include "core/train/translator/translation.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <set>
#include <utility>

#include "core/model/randommodel.h"
#include "core/train/corpus/lexicon.h"

namespace attnscope::train {

namespace {
// Named: corpus.cpp and lexicon.cpp have file-scope helpers of the same names (kAnimals, Generator,
// splitWords), and a unity build compiles them into one translation unit.
namespace translator {

// The subset of the lexicon the translator speaks. The model that learns it is tiny (d_model about 100,
// two or three layers, minutes of training on two cores), so the vocabulary is kept to 223 English
// content words (228 tokens with "the", the joining words and ".") and 169 target content words (174
// tokens): enough that alignment cannot be learnt by position, few enough that every word is seen
// often. Only the singulars and base forms are listed; plurals and the other verb forms are read from
// lexicon(), so these are the built-in model's own words. Words with two roles in English ("watch",
// "cook", "orange") and nouns whose plural is their singular ("sheep") are left out, so every English
// token has one translation.
constexpr std::string_view kAnimals = "dog cat cow horse pig duck bird wolf lion bear frog mouse fox rabbit";
constexpr std::string_view kPeople = "man woman boy girl king queen father mother";
constexpr std::string_view kWorkers = "teacher doctor farmer baker child friend";
constexpr std::string_view kNames = "tom ben sam jack leo max anna emma mia lily sara lucy";
constexpr std::string_view kThings = "book ball key cup hat bag kite toy drum map coin bell";
constexpr std::string_view kSurfaces = "mat rug bed sofa chair bench";
constexpr std::string_view kPlaces = "river park house garden forest field school kitchen";
constexpr std::string_view kTransitive = "see chase follow find help call love like push pull carry catch";
constexpr std::string_view kIntransitive = "run walk sleep swim jump sing dance laugh play wait sit";
// Adjectives of anything, then of living things only, so that sentences stay plausible ("the brave mat").
constexpr std::string_view kAdjectives = "red blue green black white brown big small old new heavy soft";
constexpr std::string_view kCharacters = "young tall wild gentle lazy clever brave shy";
constexpr std::string_view kAdverbs = "quickly slowly quietly loudly happily sadly carefully again";
constexpr std::string_view kPrepositions = "on in near behind under beside";

// The target's function words, one syllable so that no two-syllable content word can be one of them.
constexpr std::string_view kPluralSuffix = "ri";
constexpr std::pair<std::string_view, std::string_view> kJoiners[] = {{"and", "ka"}, {"but", "mo"}, {"because", "ze"}};

constexpr std::size_t kMaxTokens = 14;  // English tokens, "." included

enum class Role { Article, Name, Noun, PluralNoun, Adjective, Adverb, Preposition, Transitive, Intransitive, Joiner, FullStop };
enum class Kind { Creature, Thing, Spot };

struct NounEntry {
    std::string_view singular, plural;
    Kind kind;
};

struct Word {
    Role role;
    std::string target;  // the target word (for a plural noun its singular's, the suffix comes after it)
};

std::vector<std::string_view> splitWords(std::string_view text)
{
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < text.size()) {
        const std::size_t j = std::min(text.find(' ', i), text.size());
        if (j > i) out.push_back(text.substr(i, j - i));
        i = j + 1;
    }
    return out;
}

// FNV-1a of the words with a separator after each: fixed across machines and compilers.
std::uint64_t wordsHash(std::initializer_list<std::string_view> words, std::uint64_t salt = 0)
{
    std::uint64_t h = 0xcbf29ce484222325ull ^ salt;
    for (std::string_view s : words) {
        for (unsigned char c : s) {
            h ^= c;
            h *= 0x100000001b3ull;
        }
        h ^= 0xff;
        h *= 0x100000001b3ull;
    }
    return h;
}

struct Dictionary {
    std::vector<NounEntry> creatures, things, spots;
    std::vector<std::string_view> names, adjectives, characters, adverbs, prepositions;
    std::vector<Verb> transitive, intransitive;
    std::map<std::string, Word, std::less<>> words;  // every English token, sorted

    void add(std::string_view english, Role role)
    {
        const auto [it, fresh] = words.emplace(std::string(english), Word{role, {}});
        assert(fresh || it->second.role == role);  // one role per English token, so one translation
        (void)it;
        (void)fresh;
    }
};

template <class Entry, class Key>
const Entry* findIn(const std::vector<Entry>& list, std::string_view word, Key key)
{
    for (const Entry& e : list)
        if (key(e) == word) return &e;
    assert(!"a word of the translator's subset is missing from the lexicon");
    return nullptr;
}

Dictionary build()
{
    const Lexicon& x = lexicon();
    Dictionary d;
    const auto animal = [](const Animal& a) { return a.singular; };
    const auto person = [](const Person& p) { return p.singular; };
    const auto noun = [](const Noun& n) { return n.singular; };
    for (std::string_view w : splitWords(kAnimals))
        if (const Animal* a = findIn(x.animals, w, animal)) d.creatures.push_back({a->singular, a->plural, Kind::Creature});
    for (std::string_view w : splitWords(kPeople))
        if (const Person* p = findIn(x.people, w, person)) d.creatures.push_back({p->singular, p->plural, Kind::Creature});
    for (std::string_view w : splitWords(kWorkers))
        if (const Noun* n = findIn(x.workers, w, noun)) d.creatures.push_back({n->singular, n->plural, Kind::Creature});
    for (std::string_view w : splitWords(kThings))
        if (const Noun* n = findIn(x.things, w, noun)) d.things.push_back({n->singular, n->plural, Kind::Thing});
    for (std::string_view w : splitWords(kSurfaces))
        if (const Noun* n = findIn(x.surfaces, w, noun)) d.spots.push_back({n->singular, n->plural, Kind::Spot});
    for (std::string_view w : splitWords(kPlaces))
        if (const Noun* n = findIn(x.places, w, noun)) d.spots.push_back({n->singular, n->plural, Kind::Spot});
    for (std::string_view w : splitWords(kNames))
        if (const Name* n = findIn(x.names, w, [](const Name& m) { return m.name; })) d.names.push_back(n->name);
    const auto base = [](const Verb& v) { return v.base; };
    for (std::string_view w : splitWords(kTransitive))
        if (const Verb* v = findIn(x.transitive, w, base)) d.transitive.push_back(*v);
    for (std::string_view w : splitWords(kIntransitive))
        if (const Verb* v = findIn(x.intransitive, w, base)) d.intransitive.push_back(*v);
    const auto same = [](std::string_view s) { return s; };
    for (std::string_view w : splitWords(kAdjectives))
        if (findIn(x.adjectives, w, same)) d.adjectives.push_back(w);
    for (std::string_view w : splitWords(kCharacters))
        if (findIn(x.adjectives, w, same)) d.characters.push_back(w);
    for (std::string_view w : splitWords(kAdverbs))
        if (findIn(x.adverbs, w, same)) d.adverbs.push_back(w);
    const std::vector<std::string_view> all = lexiconWords();
    for (std::string_view w : splitWords(kPrepositions))
        if (findIn(all, w, same)) d.prepositions.push_back(w);

    // 1. Every English token with its role.
    d.add("the", Role::Article);
    d.add(".", Role::FullStop);
    for (const auto* list : {&d.creatures, &d.things, &d.spots})
        for (const NounEntry& n : *list) {
            d.add(n.singular, Role::Noun);
            d.add(n.plural, Role::PluralNoun);
        }
    for (std::string_view w : d.names) d.add(w, Role::Name);
    for (const auto& [list, role] : {std::pair{&d.transitive, Role::Transitive}, std::pair{&d.intransitive, Role::Intransitive}})
        for (const Verb& v : *list)
            for (std::string_view form : {v.base, v.third, v.past}) d.add(form, role);
    for (const auto& [list, role] : {std::pair{&d.adjectives, Role::Adjective}, std::pair{&d.characters, Role::Adjective},
                                     std::pair{&d.adverbs, Role::Adverb}, std::pair{&d.prepositions, Role::Preposition}})
        for (std::string_view w : *list) d.add(w, role);
    for (const auto& [english, target] : kJoiners) {
        d.add(english, Role::Joiner);
        d.words.find(english)->second.target = target;
    }
    d.words.find(".")->second.target = ".";

    // 2. A target word for each English word that needs its own, in sorted order so that a clash is
    // always settled the same way: two syllables picked by a hash of the English word, rehashed while the
    // result is taken, is English, or is a function word. Hashing (rather than numbering) keeps most words
    // when the subset changes.
    static constexpr std::string_view consonants = "bdfgklmnprstvz", vowels = "aeiou";
    std::set<std::string, std::less<>> taken;
    for (std::string_view w : all) taken.insert(std::string(w));
    taken.insert(std::string(kPluralSuffix));
    for (const auto& [english, target] : kJoiners) taken.insert(std::string(target));
    const std::size_t syllables = consonants.size() * vowels.size();
    for (auto& [english, word] : d.words) {
        if (word.role == Role::Article || word.role == Role::FullStop || word.role == Role::Joiner) continue;
        if (word.role == Role::PluralNoun) continue;  // takes its singular's word below
        for (std::uint64_t salt = 0;; ++salt) {
            std::uint64_t h = wordsHash({english}, salt);
            std::string candidate;
            for (int s = 0; s < 2; ++s, h /= syllables) {
                candidate += consonants[(h % syllables) / vowels.size()];
                candidate += vowels[(h % syllables) % vowels.size()];
            }
            if (taken.insert(candidate).second) {
                word.target = std::move(candidate);
                break;
            }
        }
    }
    for (const auto* list : {&d.creatures, &d.things, &d.spots})
        for (const NounEntry& n : *list) d.words.find(n.plural)->second.target = d.words.find(n.singular)->second.target;
    return d;
}

const Dictionary& dictionary()
{
    static const Dictionary d = build();
    return d;
}

// Builds the target side while the English is parsed: each emitted token remembers its source token.
class Translator {
public:
    explicit Translator(std::string_view english) : m_d(dictionary()), m_tokens(splitWords(english))
    {
        m_pair.source = english;
    }

    Result<TranslationPair> run()
    {
        const std::string& text = m_pair.source;
        if (text.empty() || text.find("  ") != std::string::npos || text.front() == ' ' || text.back() == ' ')
            return fail("is empty or its words are not separated by single spaces");
        for (std::size_t i = 0; i < m_tokens.size(); ++i)
            if (!m_d.words.count(m_tokens[i]))
                return fail("has '" + std::string(m_tokens[i]) + "', which is not a word of the translator's English");
        if (m_tokens.back() != ".") return fail("does not end with \" .\"");
        if (Status s = clause(); !s.ok()) return fail(s.error());
        if (role(m_at) == Role::Joiner) {
            emit(m_at, false);
            ++m_at;
            if (Status s = clause(); !s.ok()) return fail(s.error());
        }
        if (role(m_at) != Role::FullStop)
            return fail("has '" + std::string(m_tokens[m_at]) + "' where the sentence should end");
        if (m_at + 1 != m_tokens.size()) return fail("goes on after its full stop");
        emit(m_at, false);
        return Result<TranslationPair>::ok(std::move(m_pair));
    }

private:
    struct Phrase {
        std::size_t noun = 0, adjective = 0;
        bool hasAdjective = false, plural = false;
    };

    Role role(std::size_t i) const { return i < m_tokens.size() ? m_d.words.find(m_tokens[i])->second.role : Role::FullStop; }

    Result<TranslationPair> fail(const std::string& why) const
    {
        return Result<TranslationPair>::fail("The sentence \"" + m_pair.source + "\" " + why + ".");
    }

    void emit(std::size_t source, bool content, std::string_view token = {})
    {
        if (!m_pair.target.empty()) m_pair.target += ' ';
        m_pair.target += token.empty() ? std::string_view(m_d.words.find(m_tokens[source])->second.target) : token;
        m_pair.alignment.push_back(static_cast<int>(source));
        m_pair.targetContent.push_back(content);
    }

    // A name, or "the [adjective] noun".
    Status phrase(Phrase& p, const char* what)
    {
        const std::string where = " where " + std::string(what) + " should be";
        if (role(m_at) == Role::Name) {
            p.noun = m_at++;
            return {};
        }
        if (role(m_at) != Role::Article) return Status::failure("has '" + std::string(m_tokens[m_at]) + "'" + where);
        ++m_at;
        if (role(m_at) == Role::Adjective) {
            p.adjective = m_at++;
            p.hasAdjective = true;
        }
        if (role(m_at) != Role::Noun && role(m_at) != Role::PluralNoun)
            return Status::failure("has '" + std::string(m_tokens[m_at]) + "'" + where);
        p.plural = role(m_at) == Role::PluralNoun;
        p.noun = m_at++;
        return {};
    }

    // Noun, then its number, then its adjective: the number belongs to the noun, the adjective describes it.
    void emitPhrase(const Phrase& p)
    {
        emit(p.noun, true);
        if (p.plural) emit(p.noun, false, kPluralSuffix);
        if (p.hasAdjective) emit(p.adjective, true);
    }

    // English subject verb [object] [adverb] [preposition phrase]; target subject [object] [phrase
    // postposition] [adverb] verb.
    Status clause()
    {
        Phrase subject, object, place;
        if (Status s = phrase(subject, "a subject"); !s.ok()) return s;
        const Role verbRole = role(m_at);
        if (verbRole != Role::Transitive && verbRole != Role::Intransitive)
            return Status::failure("has '" + std::string(m_tokens[m_at]) + "' where a verb should be");
        const std::size_t verb = m_at++;
        const bool hasObject = verbRole == Role::Transitive;
        if (hasObject) {
            if (Status s = phrase(object, "an object"); !s.ok()) return s;
        } else if (role(m_at) == Role::Article || role(m_at) == Role::Name) {
            return Status::failure("gives the verb '" + std::string(m_tokens[verb]) + "' an object it cannot take");
        }
        std::size_t adverb = 0, preposition = 0;
        const bool hasAdverb = role(m_at) == Role::Adverb;
        if (hasAdverb) adverb = m_at++;
        const bool hasPlace = role(m_at) == Role::Preposition;
        if (hasPlace) {
            preposition = m_at++;
            if (Status s = phrase(place, "a place"); !s.ok()) return s;
        }
        emitPhrase(subject);
        if (hasObject) emitPhrase(object);
        if (hasPlace) {
            emitPhrase(place);
            emit(preposition, true);
        }
        if (hasAdverb) emit(adverb, true);
        emit(verb, true);
        return {};
    }

    const Dictionary& m_d;
    std::vector<std::string_view> m_tokens;
    std::size_t m_at = 0;
    TranslationPair m_pair;
};

// Samples English sentences of the grammar; in held-out mode every adjective is held out for its noun.
class Generator {
public:
    Generator(std::uint64_t seed, bool heldOut) : m_random(seed), m_d(dictionary()), m_heldOut(heldOut) {}

    TranslationPair pair()
    {
        for (;;) {
            m_words.clear();
            m_adjectives = 0;
            clause();
            if (uniform() < 0.4) {
                const double r = uniform();
                m_words.push_back(r < 0.45 ? "and" : r < 0.65 ? "but" : "because");
                clause();
            }
            m_words.push_back(".");
            // Long two-clause sentences are drawn again rather than cut, so every sentence is whole.
            if (m_words.size() > kMaxTokens || (m_heldOut && m_adjectives == 0)) continue;
            std::string english;
            for (std::string_view w : m_words) {
                if (!english.empty()) english += ' ';
                english += w;
            }
            Result<TranslationPair> p = translateSentence(english);
            assert(p.hasValue());  // the generator only builds the grammar's shapes
            return std::move(*p);
        }
    }

private:
    double uniform() { return m_random.uniform(); }
    template <class T> const T& pick(const std::vector<T>& v) { return v[m_random.nextU64() % v.size()]; }

    void clause()
    {
        const bool transitive = uniform() < 0.5;
        bool plural = false;
        if (uniform() < 0.25) m_words.push_back(pick(m_d.names));
        else plural = phrase(pick(m_d.creatures));
        const Verb& v = pick(transitive ? m_d.transitive : m_d.intransitive);
        m_words.push_back(uniform() < 0.5 ? v.past : plural ? v.base : v.third);
        if (transitive) {
            const double r = uniform();
            if (r < 0.15) m_words.push_back(pick(m_d.names));
            else phrase(r < 0.6 ? pick(m_d.creatures) : pick(m_d.things));
        }
        if (uniform() < 0.25) m_words.push_back(pick(m_d.adverbs));
        if (uniform() < (transitive ? 0.3 : 0.5)) {
            m_words.push_back(pick(m_d.prepositions));
            phrase(pick(m_d.spots));
        }
    }

    // "the [adjective] noun[s]"; returns whether the noun is plural.
    bool phrase(const NounEntry& n)
    {
        m_words.push_back("the");
        if (uniform() < 0.4) {
            std::vector<std::string_view> allowed;
            for (const auto* list : {&m_d.adjectives, &m_d.characters}) {
                if (list == &m_d.characters && n.kind != Kind::Creature) continue;
                for (std::string_view a : *list)
                    if (isHeldOutAdjectiveNoun(a, n.singular) == m_heldOut) allowed.push_back(a);
            }
            if (!allowed.empty()) {
                m_words.push_back(pick(allowed));
                ++m_adjectives;
            }
        }
        const bool plural = uniform() < 0.3;
        m_words.push_back(plural ? n.plural : n.singular);
        return plural;
    }

    SeededRandom m_random;
    const Dictionary& m_d;
    const bool m_heldOut;
    std::vector<std::string_view> m_words;
    int m_adjectives = 0;
};

std::vector<TranslationPair> generate(int count, std::uint64_t seed, bool heldOut)
{
    Generator g(seed, heldOut);
    std::vector<TranslationPair> out;
    out.reserve(static_cast<std::size_t>(std::max(count, 0)));
    for (int i = 0; i < count; ++i) out.push_back(g.pair());
    return out;
}

} // namespace translator
} // namespace

bool isHeldOutAdjectiveNoun(std::string_view adjective, std::string_view noun)
{
    // Salted so these pairs are not chosen by the same arithmetic as the corpus's held-out pairs.
    return translator::wordsHash({adjective, noun}, 0x7472616e736c61ull) % 5 == 0;
}

std::vector<TranslationPair> generateTranslationPairs(const TranslationOptions& options)
{
    return translator::generate(options.pairs, options.seed, false);
}

std::vector<TranslationPair> heldOutTranslationPairs(int count, std::uint64_t seed) { return translator::generate(count, seed, true); }

Result<TranslationPair> translateSentence(std::string_view english) { return translator::Translator(english).run(); }

std::string translationLexiconTsv()
{
    std::string out;
    for (const auto& [english, word] : translator::dictionary().words) {
        if (word.role == translator::Role::Article || word.role == translator::Role::FullStop) continue;
        out += english + '\t' + word.target;
        if (word.role == translator::Role::PluralNoun) out += ' ' + std::string(translator::kPluralSuffix);
        out += '\n';
    }
    return out;
}

std::vector<std::string> translationSourceWords()
{
    std::vector<std::string> out;
    for (const auto& [english, word] : translator::dictionary().words) out.push_back(english);
    return out;
}

std::vector<std::string> translationTargetWords()
{
    std::set<std::string> all{std::string(translator::kPluralSuffix)};
    for (const auto& [english, word] : translator::dictionary().words)
        if (!word.target.empty()) all.insert(word.target);
    return {all.begin(), all.end()};
}

} // namespace attnscope::train
