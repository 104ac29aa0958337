#pragma once
// What the fuzz targets share. Each target in targets/NAME.cpp defines LLVMFuzzerTestOneInput and is
// built twice (see CMakeLists.txt): with libFuzzer when ATTNSCOPE_FUZZ is on, and always as a replay test
// that runs its seed corpus and its regressions through the same function in the normal test suite.
//
// A target must fail loudly (expect() aborts) when the code under test breaks a promise, not only when it
// crashes: a loader that accepts a file must hand back something usable, a refusal must carry a sentence.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

namespace fuzzing {

// A broken promise: print what and where, then abort so libFuzzer (or the replay test) records the input.
#define FUZZ_EXPECT(condition, what)                                                                          \
    do {                                                                                                      \
        if (!(condition)) {                                                                                   \
            std::fprintf(stderr, "fuzz expectation failed at %s:%d: %s (%s)\n", __FILE__, __LINE__, what,      \
                         #condition);                                                                         \
            std::abort();                                                                                     \
        }                                                                                                     \
    } while (0)

inline std::string_view asText(const std::uint8_t* data, std::size_t size)
{
    return {reinterpret_cast<const char*>(data), size};
}

// The separator between the files of a multi-file input (vocab.json, merges.txt, text...). A line of its
// own, so seed files stay readable and editable by hand.
constexpr std::string_view kPartSeparator = "\n@@@@\n";

// Splits `input` into exactly `count` parts at the first count-1 separators; missing parts are empty and
// the last part keeps any further separators.
inline std::vector<std::string_view> splitParts(std::string_view input, std::size_t count)
{
    std::vector<std::string_view> parts;
    while (parts.size() + 1 < count) {
        const std::size_t at = input.find(kPartSeparator);
        if (at == std::string_view::npos) break;
        parts.push_back(input.substr(0, at));
        input.remove_prefix(at + kPartSeparator.size());
    }
    parts.push_back(input);
    while (parts.size() < count) parts.emplace_back();
    return parts;
}

// One folder per process for loaders that read files by path, on a RAM-backed file system where there
// is one. Files are rewritten for every input; the folder goes when the process ends normally.
class ScratchFolder {
public:
    ScratchFolder()
    {
        namespace fs = std::filesystem;
        std::error_code ec;
        const fs::path base = fs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0
                                  ? fs::path("/dev/shm")
                                  : fs::temp_directory_path();
        m_path = base / ("attnscope-fuzz-" + std::to_string(::getpid()));
        fs::create_directories(m_path, ec);
    }
    ~ScratchFolder()
    {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }

    std::string path() const { return m_path.string(); }

    // Writes `bytes` as NAME in the folder and returns its path.
    std::string write(const std::string& name, std::string_view bytes) const
    {
        const std::filesystem::path file = m_path / name;
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        return file.string();
    }

    void remove(const std::string& name) const
    {
        std::error_code ec;
        std::filesystem::remove(m_path / name, ec);
    }

    // A model folder from one input: part i becomes the file names[i], and an empty part leaves that file out.
    template <std::size_t N>
    void writeFolder(std::string_view input, const char* const (&names)[N]) const
    {
        writeFiles(splitParts(input, N), names, N);
    }

    // The same with one more part after the files, returned rather than written: a text for the folder's
    // tokenizer. The files come first so that seeds stay readable; the text keeps any further separators.
    template <std::size_t N>
    std::string_view writeFolderAndText(std::string_view input, const char* const (&names)[N]) const
    {
        const std::vector<std::string_view> parts = splitParts(input, N + 1);
        writeFiles(parts, names, N);
        return parts[N];
    }

private:
    void writeFiles(const std::vector<std::string_view>& parts, const char* const* names, std::size_t count) const
    {
        for (std::size_t i = 0; i < count; ++i) {
            if (parts[i].empty()) remove(names[i]);
            else write(names[i], parts[i]);
        }
    }

    std::filesystem::path m_path;
};

} // namespace fuzzing
