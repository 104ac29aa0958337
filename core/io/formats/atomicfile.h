#pragma once
// Writing a file whole or not at all. Everything AttnScope writes (models, exports, scenes, settings) goes
// through here, so a crash, a full disk or a refused permission never leaves a half-written file where a
// good one was.
//
// How: the bytes go to a new temporary file in the destination's own folder (so the final rename stays
// on one file system and is atomic), are flushed and fsync'ed, and only then is the temporary renamed
// over the destination and the folder fsync'ed. Until commit() succeeds the destination is untouched; on
// any failure, or if the writer is destroyed without commit(), the temporary is removed.
//
// Two ways to use it:
//
//     // 1. Everything already in memory:
//     Status s = writeFileAtomically(path, bytes);
//     if (!s.ok()) showError(s.error());   // "cannot write '/x/y.svg': ... The previous file is unchanged."
//
//     // 2. Streaming (large files), stop at the first failure:
//     AtomicFile file(path);
//     Status s = file.open();
//     if (s.ok()) s = file.write(header);
//     if (s.ok()) s = file.write(data, bytes);
//     if (s.ok()) s = file.commit();     // nothing is visible at `path` before this returns success
//
// A symbolic link at `path` is followed: the link stays and the file it points to is replaced. The new
// file gets the old file's permission bits when it replaces one, otherwise the usual 0666 minus umask.
// Writes are not buffered (each write() is one system call): pass large pieces, or build a small file in
// memory and use writeFileAtomically(). Errors are one sentence for a person naming the file; no
// exceptions, nothing printed.
#include <cstddef>
#include <string>
#include <string_view>

#include "core/result.h"

namespace attnscope {

class AtomicFile {
public:
    explicit AtomicFile(std::string path);
    ~AtomicFile();  // removes the temporary file unless commit() succeeded
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    // Creates the temporary file beside the destination. Fails if the folder does not exist, cannot be
    // written, or the destination is a folder.
    Status open();

    // Appends bytes. After the first failure every later write and commit() fail with the same sentence.
    Status write(const void* data, std::size_t bytes);
    Status write(std::string_view bytes) { return write(bytes.data(), bytes.size()); }

    // Flushes to disk and renames over the destination. After it returns (either way) the object is spent.
    Status commit();

    // Gives up: removes the temporary file; the destination keeps whatever it had.
    void discard();

    const std::string& path() const { return m_path; }

private:
    Status fail(std::string what, int err);

    std::string m_path;      // as the caller named it, for messages
    std::string m_target;    // where the rename goes (symlinks followed)
    std::string m_tempPath;  // empty while no temporary exists
    int m_fd = -1;
    Status m_status;         // the first failure, repeated by later calls
};

// Writes `bytes` to `path` atomically (open, write, commit).
Status writeFileAtomically(const std::string& path, std::string_view bytes);

} // namespace attnscope
