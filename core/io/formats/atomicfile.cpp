#include "core/io/formats/atomicfile.h"

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnscope {

namespace {

std::string folderOf(const std::string& path)
{
    const std::size_t slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

std::string baseName(const std::string& path)
{
    const std::size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The reason in words a person acts on; the system's own text for anything unusual.
std::string reason(int err, const std::string& folder)
{
    switch (err) {
    case ENOSPC:
    case EDQUOT: return "the disk is full";
    case EFBIG: return "the file would be larger than this system allows";
    case EACCES:
    case EPERM: return "permission is denied in the folder " + inQuotes(folder);
    case EROFS: return "the folder " + inQuotes(folder) + " is on a read-only file system";
    default: return std::generic_category().message(err);
    }
}

// A symbolic link is followed so that the link survives and its target is replaced; a dangling link
// or a plain path is used as it is.
std::string resolveTarget(const std::string& path)
{
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    char resolved[PATH_MAX];
    if (::realpath(path.c_str(), resolved) == nullptr) return path;
    return resolved;
}

bool writeAll(int fd, const char* p, std::size_t n, int& err)
{
    while (n > 0) {
        const ssize_t written = ::write(fd, p, n);
        if (written < 0) {
            if (errno == EINTR) continue;
            err = errno;
            return false;
        }
        if (written == 0) {  // a device that accepts nothing: treat as full
            err = ENOSPC;
            return false;
        }
        p += written;
        n -= static_cast<std::size_t>(written);
    }
    return true;
}

std::atomic<unsigned> g_tempCounter{0};

} // namespace

AtomicFile::AtomicFile(std::string path) : m_path(std::move(path)) {}

AtomicFile::~AtomicFile() { discard(); }

Status AtomicFile::fail(std::string what, int err)
{
    if (!m_status.ok()) return m_status;  // keep the first, most telling, sentence
    const std::string folder = folderOf(m_target.empty() ? m_path : m_target);
    std::string sentence = "cannot write " + inQuotes(m_path) + ": " + what;
    if (err != 0) sentence += (what.empty() ? "" : " (") + reason(err, folder) + (what.empty() ? "" : ")");
    struct stat st {};
    const bool previous = !m_target.empty() && ::stat(m_target.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    sentence += previous ? "; the previous file is unchanged." : "; nothing was written.";
    discard();
    m_status = Status::failure(std::move(sentence));
    return m_status;
}

Status AtomicFile::open()
{
    if (!m_status.ok()) return m_status;
    if (m_fd >= 0) return {};
    if (m_path.empty()) return fail("no file name was given", 0);
    m_target = resolveTarget(m_path);
    const std::string folder = folderOf(m_target);

    // 1. Say plainly what is wrong with the destination before creating anything.
    struct stat folderStat {};
    if (::stat(folder.c_str(), &folderStat) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) return fail("the folder " + inQuotes(folder) + " does not exist", 0);
        return fail("the folder " + inQuotes(folder) + " cannot be reached", errno);
    }
    if (!S_ISDIR(folderStat.st_mode)) return fail(inQuotes(folder) + " is not a folder", 0);
    struct stat targetStat {};
    const bool exists = ::stat(m_target.c_str(), &targetStat) == 0;
    if (exists && S_ISDIR(targetStat.st_mode)) return fail("it is a folder", 0);

    // 2. A fresh temporary beside the destination. The name starts with a dot so file pickers hide it;
    //    O_EXCL guarantees it is ours even if another writer picks the same name.
    for (int attempt = 0; attempt < 100; ++attempt) {
        const std::string candidate = folder + "/." + baseName(m_target) + ".tmp-" + std::to_string(::getpid()) + "-" +
                                      std::to_string(g_tempCounter.fetch_add(1));
        const int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            m_fd = fd;
            m_tempPath = candidate;
            break;
        }
        if (errno != EEXIST) return fail("", errno);
    }
    if (m_fd < 0) return fail("no unused temporary file name was found beside it", 0);

    // 3. Replacing a file keeps its permission bits (a private file stays private).
    if (exists && S_ISREG(targetStat.st_mode)) (void)::fchmod(m_fd, targetStat.st_mode & 07777);
    return {};
}

Status AtomicFile::write(const void* data, std::size_t bytes)
{
    if (!m_status.ok()) return m_status;
    if (m_fd < 0) {
        const Status opened = open();
        if (!opened.ok()) return opened;
    }
    int err = 0;
    if (!writeAll(m_fd, static_cast<const char*>(data), bytes, err)) return fail("", err);
    return {};
}

Status AtomicFile::commit()
{
    if (!m_status.ok()) return m_status;
    if (m_fd < 0) {
        const Status opened = open();
        if (!opened.ok()) return opened;
    }
    // 1. The data must be on disk before the name points at it, or a crash could leave an empty file
    //    under the old name (the classic ext4 delayed-allocation trap).
    if (::fsync(m_fd) != 0) return fail("", errno);
    const int fd = m_fd;
    m_fd = -1;
    if (::close(fd) != 0) return fail("", errno);  // NFS reports write errors only here
    // 2. The atomic step: readers see either the old file or the new one.
    if (::rename(m_tempPath.c_str(), m_target.c_str()) != 0) return fail("", errno);
    m_tempPath.clear();
    // 3. Make the rename itself durable. Some file systems refuse fsync on folders; the data is safe
    //    regardless, so that is not reported.
    const int dir = ::open(folderOf(m_target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        (void)::fsync(dir);
        ::close(dir);
    }
    m_status = Status::failure("cannot write " + inQuotes(m_path) + ": it was already committed.");
    return {};
}

void AtomicFile::discard()
{
    if (m_fd >= 0) {
        ::close(m_fd);
        m_fd = -1;
    }
    if (!m_tempPath.empty()) {
        ::unlink(m_tempPath.c_str());
        m_tempPath.clear();
    }
}

Status writeFileAtomically(const std::string& path, std::string_view bytes)
{
    AtomicFile file(path);
    Status s = file.open();
    if (s.ok()) s = file.write(bytes);
    if (s.ok()) s = file.commit();
    return s;
}

} // namespace attnscope
