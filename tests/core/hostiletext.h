#pragma once
// The hostile-text matrix: text people paste from anywhere, each row through every tokenizer (core tests),
// the CLI and the window. `valid` says whether the bytes are UTF-8 (then they must be tokenised), or not
// (then refused with a sentence naming the byte).
#include <string>
#include <vector>

namespace hostiletext {

struct Row {
    const char* name;
    std::string bytes;
    bool valid;
};

inline std::string repeat(const std::string& unit, std::size_t times)
{
    std::string s;
    s.reserve(unit.size() * times);
    for (std::size_t i = 0; i < times; ++i) s += unit;
    return s;
}

inline const std::vector<Row>& rows()
{
    static const std::vector<Row> table = {
        {"invalid UTF-8: a lone 0xFF", "abc \xff def", false},
        {"invalid UTF-8: a sequence cut short", "caf\xc3", false},
        {"invalid UTF-8: an overlong slash", "a\xc0\xaf" "b", false},
        {"invalid UTF-8: past U+10FFFF", "\xf4\x90\x80\x80", false},
        {"lone high surrogate encoded in UTF-8", "x\xed\xa0\x80y", false},
        {"lone low surrogate encoded in UTF-8", "\xed\xbf\xbf", false},
        {"NUL bytes inside the text", std::string("a\0b\0\0 c d\0", 11), true},
        {"1 MB of one letter", std::string(1'000'000, 'a'), true},
        {"1 MB of 'a ' (500,000 words)", repeat("a ", 500'000), true},
        {"1 MB of spaces", std::string(1'000'000, ' '), true},
        {"1 MB of one two-byte letter", repeat("\xc3\xa9", 500'000), true},
        {"100,000 emoji", repeat("\xf0\x9f\x98\x80", 100'000), true},
        {"100,000 emoji with spaces", repeat("\xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd ", 100'000), true},
        {"right-to-left text with bidi overrides",
         "\xd9\x85\xd8\xb1\xd8\xad\xd8\xa8\xd8\xa7 \xe2\x80\xae\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d\xe2\x80\xac world "
         "\xe2\x81\xa7\xd8\xb9\xd8\xb1\xd8\xa8\xd9\x8a\xe2\x81\xa9",
         true},
        {"100,000 combining marks on one letter", std::string("e").append(repeat("\xcc\x81", 100'000)), true},
        {"zero-width joiners and variation selectors",
         repeat("\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x91\xa7\xef\xb8\x8f", 10'000), true},
    };
    return table;
}

} // namespace hostiletext
