#pragma once
// The words of the built-in corpus's grammar, by the role they play in its sentences. Every word is
// lower case, one token of the word tokenizer (letters only), and used by at least one sentence shape.
#include <string_view>
#include <vector>

namespace attnscope::train {

enum class Gender { Male, Female };

struct Animal {
    std::string_view singular, plural;
    std::vector<std::string_view> sounds;  // past tense of what only this kind of animal does: "barked"
};

struct Person {
    std::string_view singular, plural;
    Gender gender;
};

struct Name {
    std::string_view name;
    Gender gender;
};

struct Noun {
    std::string_view singular, plural;
};

struct Verb {
    std::string_view base, third, past;  // "bite", "bites", "bit"
};

struct Lexicon {
    std::vector<Animal> animals;
    std::vector<Person> people;       // "man", "teacher": with the pronoun that refers back to them
    std::vector<Name> names;
    std::vector<Noun> workers;        // "teacher", "farmer": people named by their work, without a pronoun
    std::vector<Noun> surfaces;       // things an animal can sit or sleep on: "mat", "rug"
    std::vector<Noun> things;         // things people give, buy, read and own
    std::vector<Noun> places;         // "river", "park", "house"
    std::vector<Noun> foods;
    std::vector<Verb> transitive;     // "bites", "sees": subject verb object
    std::vector<Verb> intransitive;   // "runs", "sleeps"
    std::vector<std::string_view> postures;      // past tense of resting on something: "sat", "slept"
    std::vector<std::string_view> adjectives;    // of things and animals: "red", "old"
    std::vector<std::string_view> feelings;      // what "was" a creature: "tired", "hungry"
    std::vector<std::string_view> adverbs;
    std::vector<std::string_view> prepositions;  // of place: "near", "behind"
    std::vector<std::string_view> times;         // "yesterday", "monday"
    std::vector<std::string_view> numbers;       // "two" ... (plural counts)
    std::vector<std::string_view> extra;         // words used only in fixed phrases and word lists
};

// The one lexicon, built on first use.
const Lexicon& lexicon();

// Every distinct word the grammar can produce, sorted, without punctuation.
std::vector<std::string_view> lexiconWords();

} // namespace attnscope::train
