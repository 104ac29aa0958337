#include "core/train/corpus/corpus.h"

#include <algorithm>
#include <cctype>

#include "core/model/randommodel.h"
#include "core/train/corpus/lexicon.h"

namespace attnscope::train {

namespace {

using Words = std::vector<std::string_view>;

// FNV-1a of the two words: a fixed, machine-independent choice of the held-out pairs.
std::uint64_t pairHash(std::string_view a, std::string_view b)
{
    std::uint64_t h = 0xcbf29ce484222325ull;
    auto mix = [&h](std::string_view s) {
        for (unsigned char c : s) {
            h ^= c;
            h *= 0x100000001b3ull;
        }
        h ^= 0xff;
        h *= 0x100000001b3ull;
    };
    mix(a);
    mix(b);
    return h;
}

class Generator {
public:
    explicit Generator(std::uint64_t seed) : m_random(seed), m_x(lexicon()), m_all(lexiconWords()) {}

    std::string document()
    {
        Words w;
        const double kind = uniform();
        if (kind < 0.28) {
            randomWordsTwice(w);
        } else if (kind < 0.36) {
            sayTheWords(w);
        } else {
            // A short story of sentences; sometimes one of them comes back word for word later on.
            const int n = 3 + below(5);
            std::vector<Words> sentences;
            for (int i = 0; i < n; ++i) sentences.push_back(sentence());
            if (uniform() < 0.5) sentences.push_back(sentences[static_cast<std::size_t>(below(n))]);
            for (const Words& s : sentences) w.insert(w.end(), s.begin(), s.end());
        }
        std::string line;
        for (std::string_view word : w) {
            if (!line.empty()) line += ' ';
            line += word;
        }
        return line;
    }

    // One sentence of the grammar, ending with its full stop.
    Words sentence()
    {
        Words w;
        const double r = uniform();
        if (r < 0.24) pronounIt(w);
        else if (r < 0.34) pronounHeShe(w);
        else if (r < 0.44) agreement(w);
        else if (r < 0.54) transitive(w);
        else if (r < 0.60) relativeClause(w);
        else if (r < 0.66) giving(w);
        else if (r < 0.72) riverAndBank(w);
        else if (r < 0.80) intransitive(w);
        else if (r < 0.84) food(w);
        else if (r < 0.89) counting(w);
        else if (r < 0.94) {
            question(w);
            w.push_back("?");
            return w;
        } else describing(w);
        w.push_back(uniform() < 0.05 ? "!" : ".");
        return w;
    }

    // "the dog sat on the rug because it barked": the sound says which noun "it" stands for.
    void pronounIt(Words& w, bool heldOut = false)
    {
        const Animal* a = nullptr;
        const Noun* s = nullptr;
        do {
            a = &pick(m_x.animals);
            s = &pick(m_x.surfaces);
        } while (isHeldOutPair(a->singular, s->singular) != heldOut);
        const bool plural = !heldOut && uniform() < 0.2;
        w.push_back("the");
        if (uniform() < 0.3) w.push_back(pick(m_x.adjectives));
        w.push_back(plural ? a->plural : a->singular);
        w.push_back(pick(m_x.postures));
        if (uniform() < 0.25) w.push_back(pick(m_x.adverbs));
        w.push_back("on");
        w.push_back("the");
        if (uniform() < 0.3) w.push_back(pick(m_x.adjectives));
        w.push_back(s->singular);
        w.push_back("because");
        w.push_back(plural ? "they" : "it");
        if (uniform() < 0.7) {
            w.push_back(pick(a->sounds));
            if (uniform() < 0.3) {
                static const std::vector<Words> endings = {{"loudly"}, {"softly"}, {"again"}, {"all", "night"}, {"at", "night"}};
                const Words& e = pick(endings);
                w.insert(w.end(), e.begin(), e.end());
            }
        } else {
            w.push_back(plural ? "were" : "was");
            w.push_back(pick(m_x.feelings));
        }
    }

    // "anna thanked tom because she was happy": the pronoun agrees with the subject's gender.
    void pronounHeShe(Words& w)
    {
        Gender g;
        subject(w, g);
        w.push_back(pick(m_x.transitive).past);
        Gender other;
        object(w, other);
        w.push_back("because");
        w.push_back(g == Gender::Male ? "he" : "she");
        if (uniform() < 0.6) {
            w.push_back("was");
            w.push_back(pick(m_x.feelings));
        } else {
            w.push_back(pick(m_x.intransitive).past);
            w.push_back(pick(m_x.adverbs));
        }
    }

    // "the dogs near the old house are hungry": the verb agrees with the first noun, not the nearest one.
    void agreement(Words& w)
    {
        const bool plural = uniform() < 0.5, otherPlural = uniform() < 0.5;
        const Noun n = anyNoun();
        w.push_back("the");
        w.push_back(plural ? n.plural : n.singular);
        w.push_back(pick(m_x.prepositions));
        w.push_back("the");
        if (uniform() < 0.5) w.push_back(pick(m_x.adjectives));
        const Noun& m = pick(m_x.places);
        w.push_back(otherPlural ? m.plural : m.singular);
        const bool past = uniform() < 0.4;
        w.push_back(past ? (plural ? "were" : "was") : (plural ? "are" : "is"));
        if (uniform() < 0.3) w.push_back("very");
        w.push_back(uniform() < 0.5 ? pick(m_x.adjectives) : pick(m_x.feelings));
    }

    // "dog bites man", "man bites dog", "the fox chased the rabbit".
    void transitive(Words& w)
    {
        const Verb& v = pick(m_x.transitive);
        if (uniform() < 0.3) {
            // Headline style: no articles, present tense; order alone says who did what.
            w.push_back(creature().singular);
            w.push_back(v.third);
            w.push_back(creature().singular);
            return;
        }
        w.push_back("the");
        w.push_back(creature().singular);
        w.push_back(uniform() < 0.5 ? v.past : v.third);
        w.push_back("the");
        if (uniform() < 0.3) w.push_back(pick(m_x.adjectives));
        w.push_back(uniform() < 0.5 ? creature().singular : pick(m_x.things).singular);
    }

    // "the car that i bought last year is red".
    void relativeClause(Words& w)
    {
        const Noun& t = pick(m_x.things);
        w.push_back("the");
        w.push_back(t.singular);
        w.push_back("that");
        static const Words whoWords = {"i", "you", "we", "they", "he", "she"};
        if (uniform() < 0.6) w.push_back(pick(whoWords));
        else w.push_back(pick(m_x.names).name);
        static const Words acquired = {"bought", "found", "saw", "sold", "kept", "lost", "made", "took", "got", "wanted", "borrowed", "painted"};
        w.push_back(pick(acquired));
        if (uniform() < 0.6) {
            w.push_back(uniform() < 0.5 ? "last" : "next");
            static const Words units = {"year", "week", "month", "night", "summer", "winter", "spring", "autumn", "monday", "friday"};
            w.push_back(pick(units));
        } else {
            when(w);
        }
        w.push_back(uniform() < 0.5 ? "is" : "was");
        w.push_back(pick(m_x.adjectives));
    }

    // "she gave the book to him".
    void giving(Words& w)
    {
        Gender g, other;
        subject(w, g);
        static const Words verbs = {"gave", "sent", "showed", "brought", "lent", "sold", "passed", "threw"};
        w.push_back(pick(verbs));
        w.push_back("the");
        if (uniform() < 0.3) w.push_back(pick(m_x.adjectives));
        w.push_back(pick(m_x.things).singular);
        w.push_back("to");
        object(w, other);
    }

    // "the bank of the river", and the other bank, where money is kept.
    void riverAndBank(Words& w)
    {
        const double r = uniform();
        if (r < 0.35) {
            for (std::string_view s : {"the", "bank", "of", "the", "river"}) w.push_back(s);
            w.push_back(uniform() < 0.5 ? "was" : "is");
            w.push_back(pick(m_x.adjectives));
        } else if (r < 0.7) {
            Gender g;
            subject(w, g);
            static const Words moved = {"walked", "ran", "sat", "waited", "played", "slept", "rested", "wandered"};
            w.push_back(pick(moved));
            w.push_back(pick(Words{"along", "on", "by", "near"}));
            for (std::string_view s : {"the", "bank", "of", "the", "river"}) w.push_back(s);
        } else {
            Gender g;
            subject(w, g);
            w.push_back(pick(Words{"put", "kept", "took", "left"}));
            w.push_back("money");
            w.push_back(pick(Words{"in", "at", "from"}));
            w.push_back("the");
            w.push_back("bank");
        }
    }

    // "the old horse ran quickly in the field".
    void intransitive(Words& w)
    {
        w.push_back("the");
        if (uniform() < 0.4) w.push_back(pick(m_x.adjectives));
        w.push_back(creature().singular);
        const Verb& v = pick(m_x.intransitive);
        w.push_back(uniform() < 0.5 ? v.past : v.third);
        if (uniform() < 0.5) w.push_back(pick(m_x.adverbs));
        if (uniform() < 0.6) {
            w.push_back(pick(Words{"in", "at", "near", "behind", "inside", "outside"}));
            w.push_back("the");
            w.push_back(pick(m_x.places).singular);
        }
    }

    // "emma ate the sweet apple".
    void food(Words& w)
    {
        Gender g;
        subject(w, g);
        static const Words verbs = {"ate", "likes", "liked", "cooked", "bought", "wanted", "shared", "sold", "hates", "loves"};
        w.push_back(pick(verbs));
        const Noun& f = pick(m_x.foods);
        if (uniform() < 0.5) {
            w.push_back("the");
            if (uniform() < 0.4) w.push_back(pick(m_x.adjectives));
            w.push_back(f.singular);
        } else {
            w.push_back(pick(m_x.numbers));
            w.push_back(f.plural);
        }
    }

    // "there are three cats in the garden".
    void counting(Words& w)
    {
        w.push_back("there");
        const Noun n = anyNoun();
        if (uniform() < 0.5) {
            w.push_back(uniform() < 0.6 ? "are" : "were");
            w.push_back(pick(m_x.numbers));
            w.push_back(n.plural);
        } else {
            w.push_back(uniform() < 0.6 ? "is" : "was");
            w.push_back("a");
            w.push_back(n.singular);
        }
        w.push_back(pick(Words{"in", "at", "near", "behind"}));
        w.push_back("the");
        w.push_back(pick(m_x.places).singular);
        if (uniform() < 0.3) when(w);
    }

    // "the red car is fast", "on monday the market was busy".
    void describing(Words& w)
    {
        if (uniform() < 0.5) {
            when(w);
            w.push_back(",");
        }
        w.push_back("the");
        w.push_back(pick(m_x.adjectives));
        const Noun n = anyNoun();
        w.push_back(n.singular);
        w.push_back(uniform() < 0.5 ? "is" : "was");
        if (uniform() < 0.3) w.push_back(pick(Words{"very", "not", "also"}));
        w.push_back(pick(m_x.adjectives));
    }

    // "is the old dog hungry ?", "did anna see the fox ?"
    void question(Words& w)
    {
        if (uniform() < 0.5) {
            const bool plural = uniform() < 0.4;
            const Noun n = creature();
            w.push_back(plural ? "are" : "is");
            w.push_back("the");
            if (uniform() < 0.4) w.push_back(pick(m_x.adjectives));
            w.push_back(plural ? n.plural : n.singular);
            w.push_back(uniform() < 0.5 ? pick(m_x.feelings) : pick(m_x.adjectives));
        } else {
            w.push_back(pick(Words{"did", "does"}));
            Gender g;
            subject(w, g);
            w.push_back(pick(m_x.transitive).base);
            w.push_back("the");
            w.push_back(uniform() < 0.5 ? creature().singular : pick(m_x.things).singular);
        }
    }

    // A list of random words from the whole lexicon, said twice: only copying predicts the second half.
    void randomWordsTwice(Words& w)
    {
        const int n = 3 + below(16);
        Words list;
        for (int i = 0; i < n; ++i) list.push_back(pick(m_all));
        const int times = uniform() < 0.85 ? 2 : 3;
        for (int k = 0; k < times; ++k) w.insert(w.end(), list.begin(), list.end());
    }

    // "listen and say the words : cup river ten . cup river ten ."
    void sayTheWords(Words& w)
    {
        for (std::string_view s : {"listen", "and", "say", "the", "words", ":"}) w.push_back(s);
        const int n = 2 + below(8);
        Words list;
        for (int i = 0; i < n; ++i) list.push_back(pick(m_all));
        for (int k = 0; k < 2; ++k) {
            w.insert(w.end(), list.begin(), list.end());
            w.push_back(".");
        }
    }

private:
    double uniform() { return m_random.uniform(); }
    int below(int n) { return static_cast<int>(m_random.nextU64() % static_cast<std::uint64_t>(n)); }
    template <class T> const T& pick(const std::vector<T>& v) { return v[static_cast<std::size_t>(below(static_cast<int>(v.size())))]; }

    // An animal, a person or a worker, as a noun.
    Noun creature()
    {
        const double r = uniform();
        if (r < 0.45) {
            const Animal& a = pick(m_x.animals);
            return {a.singular, a.plural};
        }
        if (r < 0.75) {
            const Person& p = pick(m_x.people);
            return {p.singular, p.plural};
        }
        return pick(m_x.workers);
    }

    // "yesterday", "on monday", "in march", "in the evening", "at night".
    void when(Words& w)
    {
        static const Words days = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"};
        static const Words seasons = {"january", "february", "march", "april", "may", "june", "july", "august", "september",
                                      "october", "november", "december", "spring", "summer", "autumn", "winter"};
        static const Words parts = {"morning", "afternoon", "evening"};
        const double r = uniform();
        if (r < 0.2) {
            w.push_back(pick(Words{"yesterday", "today", "tomorrow", "tonight"}));
        } else if (r < 0.45) {
            w.push_back("on");
            w.push_back(pick(days));
        } else if (r < 0.7) {
            w.push_back("in");
            w.push_back(pick(seasons));
        } else if (r < 0.9) {
            w.push_back("in");
            w.push_back("the");
            w.push_back(pick(parts));
        } else {
            w.push_back("at");
            w.push_back("night");
        }
    }

    Noun anyNoun()
    {
        const double r = uniform();
        if (r < 0.5) return creature();
        if (r < 0.8) return pick(m_x.things);
        return pick(m_x.foods);
    }

    // A name (half the time), "the <person>" (up to `personShare`) or else a pronoun in the form given, with
    // the gender a later pronoun must agree with.
    void person(Words& w, Gender& g, double personShare, const char* male, const char* female)
    {
        const double r = uniform();
        if (r < 0.5) {
            const Name& n = pick(m_x.names);
            w.push_back(n.name);
            g = n.gender;
        } else if (r < personShare) {
            const Person& p = pick(m_x.people);
            w.push_back("the");
            w.push_back(p.singular);
            g = p.gender;
        } else {
            g = uniform() < 0.5 ? Gender::Male : Gender::Female;
            w.push_back(g == Gender::Male ? male : female);
        }
    }
    void subject(Words& w, Gender& g) { person(w, g, 0.85, "he", "she"); }
    void object(Words& w, Gender& g) { person(w, g, 0.8, "him", "her"); }

    SeededRandom m_random;
    const Lexicon& m_x;
    const Words m_all;
};

} // namespace

bool isHeldOutPair(std::string_view animal, std::string_view surface) { return pairHash(animal, surface) % 5 == 0; }

std::string generateCorpus(const CorpusOptions& options)
{
    Generator g(options.seed);
    std::string out;
    for (int i = 0; i < options.documents; ++i) {
        out += g.document();
        out += '\n';
    }
    return out;
}

std::vector<PronounProbe> pronounProbes()
{
    const Lexicon& x = lexicon();
    std::vector<PronounProbe> probes;
    for (const Animal& a : x.animals)
        for (const Noun& s : x.surfaces) {
            if (!isHeldOutPair(a.singular, s.singular)) continue;
            const std::uint64_t h = pairHash(s.singular, a.singular);
            PronounProbe p;
            p.animal = a.singular;
            p.surface = s.singular;
            const std::string_view posture = x.postures[h % x.postures.size()];
            const std::string_view sound = a.sounds[(h >> 8) % a.sounds.size()];
            // the(0) animal(1) posture(2) on(3) the(4) surface(5) because(6) it(7) sound(8) .(9)
            p.text = "the " + p.animal + " " + std::string(posture) + " on the " + p.surface + " because it " + std::string(sound) + " .";
            p.animalWord = 1;
            p.surfaceWord = 5;
            p.pronounWord = 7;
            probes.push_back(std::move(p));
        }
    return probes;
}

std::vector<std::string> corpusWords(std::string_view line)
{
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
        std::size_t j = i;
        while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
        if (j > i) out.emplace_back(line.substr(i, j - i));
        i = j;
    }
    return out;
}

std::vector<std::string> heldOutSentences(int count, std::uint64_t seed)
{
    Generator g(seed);
    std::vector<std::string> out;
    for (int i = 0; i < count; ++i) {
        Words w;
        g.pronounIt(w, /*heldOut=*/true);
        w.push_back(".");
        std::string line;
        for (std::string_view word : w) {
            if (!line.empty()) line += ' ';
            line += word;
        }
        out.push_back(std::move(line));
    }
    return out;
}

} // namespace attnscope::train
