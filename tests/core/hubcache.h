#pragma once
// A Hugging Face cache written by the tests, laid out as the hub's clients write it: each file once in
// blobs/ under its SHA-256, a snapshot folder per commit whose files are relative links into ../../blobs,
// and refs/NAME holding a commit. Needs ATTNSCOPE_GPT2_TOKENIZER_DIR (through tinygpt2.h).
#include <QCryptographicHash>
#include <QFile>

#include <filesystem>
#include <map>
#include <string>

#include "tinygpt2.h"

namespace hubcache {

namespace fs = std::filesystem;

// Moves every file of `folder` into the cache's blobs of `repo` ("ORG/NAME") and links it from
// snapshots/`commit`; `ref` (when not empty) then names the commit. The folder is removed.
inline void addSnapshot(const fs::path& cache, const std::string& repo, const std::string& folder, const std::string& commit,
                        const std::string& ref)
{
    std::string repoFolder = "models--";
    for (char c : repo) repoFolder += c == '/' ? std::string("--") : std::string(1, c);
    const fs::path repoDir = cache / repoFolder;
    fs::create_directories(repoDir / "blobs");
    fs::create_directories(repoDir / "snapshots" / commit);
    for (const fs::directory_entry& e : fs::directory_iterator(folder)) {
        QFile f(QString::fromStdString(e.path().string()));
        if (!f.open(QIODevice::ReadOnly)) throw std::runtime_error("cannot read " + e.path().string());
        const std::string hash = QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256).toHex().toStdString();
        f.close();
        const fs::path blob = repoDir / "blobs" / hash;
        if (!fs::exists(blob)) fs::copy_file(e.path(), blob);
        fs::create_symlink(fs::path("..") / ".." / "blobs" / hash, repoDir / "snapshots" / commit / e.path().filename());
    }
    fs::remove_all(folder);
    if (!ref.empty()) {
        fs::create_directories((repoDir / "refs" / ref).parent_path());
        tinygpt2::writeText(repoDir / "refs" / ref, commit);
    }
}

// A 40-digit commit made of one repeated hexadecimal digit, for readable tests.
inline std::string commitOf(char digit) { return std::string(40, digit); }

} // namespace hubcache
