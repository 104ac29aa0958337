#pragma once
// A small stand-in for the Hugging Face hub on 127.0.0.1, for the download tests: the revision API (main and
// any branches added, as Pythia publishes its checkpoints), the
// resolve endpoint (small files answered directly with a git-blob ETag, large ones redirected to /cdn/SHA256
// with X-Linked-Etag and X-Linked-Size, as the hub sends LFS files to its CDN) and range requests. It can
// misbehave on purpose: drop a connection after some bytes, stall, send bytes that do not match the hash,
// demand a token, trickle slowly. It runs on its own thread, so a test can wait for a child process while
// the server answers it. Nothing here reaches outside the machine.
#include <QByteArray>
#include <QCryptographicHash>
#include <QMutex>
#include <QSemaphore>
#include <QTcpServer>
#include <QTcpSocket>
#include <QThread>
#include <QTimer>

#include <map>
#include <string>
#include <vector>

namespace hubtest {

struct RepoFile {
    QByteArray bytes;
    bool lfs = false;  // large: redirected to the CDN, hashed with SHA-256
};

struct Repo {
    QByteArray commit;  // 40 hexadecimal digits
    std::map<QByteArray, RepoFile> files;
};

struct Faults {
    QByteArray file;            // the file the faults below apply to (by name)
    int dropAfter = -1;         // close the connection after this many bytes of the body...
    int drops = 0;              // ...this many times
    int stallAfter = -1;        // send this many bytes, then nothing more (once)
    bool corrupt = false;       // flip a byte of the body (its hash no longer matches)
    QByteArray token;           // every request needs "Authorization: Bearer TOKEN"
    int trickleBytes = 0;       // > 0: send the body this many bytes at a time...
    int trickleMs = 0;          // ...this far apart
};

struct Request {
    QByteArray method, path, range, authorization;
    QByteArray proxiedHost;  // set when the request came as to a proxy ("GET http://host/path")
};

inline QByteArray gitBlobSha1(const QByteArray& bytes)
{
    QCryptographicHash h(QCryptographicHash::Sha1);
    h.addData(QByteArray("blob ") + QByteArray::number(bytes.size()) + QByteArray(1, '\0'));
    h.addData(bytes);
    return h.result().toHex();
}

inline QByteArray sha256(const QByteArray& bytes) { return QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex(); }

class HubServer : public QThread {
public:
    HubServer() { start(); m_ready.acquire(); }
    ~HubServer() override
    {
        quit();
        wait();
    }

    QString endpoint() const { return QStringLiteral("http://127.0.0.1:%1").arg(m_port); }
    void addRepo(const QByteArray& name, Repo repo)
    {
        QMutexLocker lock(&m_mutex);
        m_repos[name] = std::move(repo);
    }
    // A branch of `name` other than main (Pythia's step1000), with its own commit and files.
    void addBranch(const QByteArray& name, const QByteArray& branch, Repo repo)
    {
        QMutexLocker lock(&m_mutex);
        m_branches[name][branch] = std::move(repo);
    }
    void setFaults(Faults f)
    {
        QMutexLocker lock(&m_mutex);
        m_faults = std::move(f);
    }
    std::vector<Request> requests()
    {
        QMutexLocker lock(&m_mutex);
        return m_requests;
    }
    void clearRequests()
    {
        QMutexLocker lock(&m_mutex);
        m_requests.clear();
    }

protected:
    void run() override
    {
        QTcpServer server;
        server.listen(QHostAddress::LocalHost, 0);
        m_port = server.serverPort();
        QObject::connect(&server, &QTcpServer::newConnection, &server, [this, &server] {
            while (QTcpSocket* socket = server.nextPendingConnection()) {
                auto* buffer = new QByteArray;
                QObject::connect(socket, &QTcpSocket::disconnected, socket, [socket, buffer] {
                    delete buffer;
                    socket->deleteLater();
                });
                QObject::connect(socket, &QTcpSocket::readyRead, socket, [this, socket, buffer] {
                    buffer->append(socket->readAll());
                    const qsizetype end = buffer->indexOf("\r\n\r\n");
                    if (end < 0) return;
                    const QByteArray head = buffer->left(end);
                    buffer->clear();
                    answer(socket, head);
                });
            }
        });
        m_ready.release();
        exec();
    }

private:
    static void reply(QTcpSocket* s, int status, const QByteArray& reason, const QList<QPair<QByteArray, QByteArray>>& headers,
                      const QByteArray& body, bool withBody)
    {
        QByteArray out = "HTTP/1.1 " + QByteArray::number(status) + " " + reason + "\r\n";
        for (const auto& [k, v] : headers) out += k + ": " + v + "\r\n";
        out += "Content-Length: " + QByteArray::number(body.size()) + "\r\nConnection: close\r\n\r\n";
        if (withBody) out += body;
        s->write(out);
        s->disconnectFromHost();
    }

    void answer(QTcpSocket* s, const QByteArray& head)
    {
        const QList<QByteArray> lines = head.split('\n');
        const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
        Request r{first.value(0), first.value(1), {}, {}, {}};
        if (r.path.startsWith("http://")) {
            // Asked as a proxy: the target is absolute. Answer as the hub it names would.
            const qsizetype slash = r.path.indexOf('/', 7);
            r.proxiedHost = r.path.mid(7, slash - 7);
            r.path = r.path.mid(slash);
        }
        for (const QByteArray& line : lines.mid(1)) {
            const qsizetype colon = line.indexOf(':');
            const QByteArray key = line.left(colon).trimmed().toLower(), value = line.mid(colon + 1).trimmed();
            if (key == "range") r.range = value;
            if (key == "authorization") r.authorization = value;
        }
        QMutexLocker lock(&m_mutex);
        m_requests.push_back(r);
        const bool head_ = r.method == "HEAD";
        if (!m_faults.token.isEmpty() && r.authorization != "Bearer " + m_faults.token && !r.path.startsWith("/cdn/"))
            return reply(s, 401, "Unauthorized", {}, "{\"error\":\"gated\"}", !head_);

        // /api/models/ORG/NAME/revision/REV
        if (r.path.startsWith("/api/models/")) {
            const QByteArray rest = r.path.mid(12);
            const qsizetype at = rest.indexOf("/revision/");
            const QByteArray name = rest.left(at), revision = rest.mid(at + 10);
            const Repo* repo = at < 0 ? nullptr : findRepo(name, revision);
            if (!repo) return reply(s, 404, "Not Found", {}, "{\"error\":\"Repository not found\"}", !head_);
            QByteArray json = "{\"id\":\"" + name + "\",\"sha\":\"" + repo->commit + "\",\"siblings\":[";
            bool firstFile = true;
            for (const auto& [file, content] : repo->files) {
                json += QByteArray(firstFile ? "" : ",") + "{\"rfilename\":\"" + file + "\"}";
                firstFile = false;
            }
            json += "]}";
            return reply(s, 200, "OK", {{"Content-Type", "application/json"}}, json, !head_);
        }
        // /cdn/SHA256: an LFS file's bytes
        if (r.path.startsWith("/cdn/")) {
            const QByteArray hash = r.path.mid(5);
            for (const Repo* repo : allRepos())
                for (const auto& [file, content] : repo->files)
                    if (content.lfs && sha256(content.bytes) == hash) return sendBody(s, r, file, content.bytes, head_);
            return reply(s, 404, "Not Found", {}, {}, !head_);
        }
        // /ORG/NAME/resolve/COMMIT/FILE
        const qsizetype resolve = r.path.indexOf("/resolve/");
        if (resolve > 0) {
            const QByteArray name = r.path.mid(1, resolve - 1);
            const QByteArray rest = r.path.mid(resolve + 9);
            const QByteArray commit = rest.left(rest.indexOf('/')), file = rest.mid(rest.indexOf('/') + 1);
            const Repo* repo = findRepo(name, commit);
            if (!repo || commit != repo->commit || !repo->files.count(file)) return reply(s, 404, "Not Found", {}, {}, !head_);
            const RepoFile& f = repo->files.at(file);
            if (f.lfs) {
                const QByteArray hash = sha256(f.bytes);
                return reply(s, 302, "Found",
                             {{"Location", "/cdn/" + hash}, {"X-Linked-Etag", "\"" + hash + "\""}, {"X-Linked-Size", QByteArray::number(f.bytes.size())},
                              {"ETag", "\"" + gitBlobSha1("version https://git-lfs.github.com/spec/v1") + "\""}, {"X-Repo-Commit", commit}},
                             {}, !head_);
            }
            if (head_)
                return reply(s, 200, "OK", {{"ETag", "\"" + gitBlobSha1(f.bytes) + "\""}, {"X-Repo-Commit", commit}},
                             QByteArray(f.bytes.size(), ' '), false);
            return sendBody(s, r, file, f.bytes, false);
        }
        reply(s, 404, "Not Found", {}, {}, !head_);
    }

    // The repository `name` at `revision`: main, a branch added with addBranch, or either's commit.
    const Repo* findRepo(const QByteArray& name, const QByteArray& revision) const
    {
        if (const auto it = m_repos.find(name); it != m_repos.end() && (revision == "main" || revision == it->second.commit))
            return &it->second;
        if (const auto b = m_branches.find(name); b != m_branches.end())
            for (const auto& [branch, repo] : b->second)
                if (revision == branch || revision == repo.commit) return &repo;
        return nullptr;
    }

    std::vector<const Repo*> allRepos() const
    {
        std::vector<const Repo*> out;
        for (const auto& [name, repo] : m_repos) out.push_back(&repo);
        for (const auto& [name, branches] : m_branches)
            for (const auto& [branch, repo] : branches) out.push_back(&repo);
        return out;
    }

    // The body, or the part a range asks for, misbehaving as the faults say.
    void sendBody(QTcpSocket* s, const Request& r, const QByteArray& file, QByteArray body, bool headOnly)
    {
        const bool faulty = file == m_faults.file;
        if (faulty && m_faults.corrupt) body[body.size() / 2] = char(body[body.size() / 2] ^ 0x5A);
        qint64 from = 0;
        if (r.range.startsWith("bytes=")) from = r.range.mid(6, r.range.indexOf('-') - 6).toLongLong();
        const QByteArray part = body.mid(from);
        QByteArray out = from > 0 ? "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes " + QByteArray::number(from) + "-" +
                                        QByteArray::number(body.size() - 1) + "/" + QByteArray::number(body.size()) + "\r\n"
                                  : QByteArray("HTTP/1.1 200 OK\r\n");
        out += "Content-Length: " + QByteArray::number(part.size()) + "\r\nAccept-Ranges: bytes\r\nConnection: close\r\n\r\n";
        s->write(out);
        if (headOnly) return s->disconnectFromHost();
        if (faulty && m_faults.drops > 0 && m_faults.dropAfter >= 0) {
            --m_faults.drops;
            s->write(part.left(m_faults.dropAfter));
            s->flush();
            s->waitForBytesWritten(1000);
            return s->disconnectFromHost();  // the connection ends mid-file (a FIN, so what was sent arrives)
        }
        if (faulty && m_faults.stallAfter >= 0) {
            s->write(part.left(m_faults.stallAfter));
            m_faults.stallAfter = -1;
            return;  // nothing more, ever: the client must give up on this connection
        }
        if (faulty && m_faults.trickleBytes > 0) {
            // A slow link: the rest goes out a little at a time from this thread's event loop.
            auto* timer = new QTimer(s);
            auto offset = std::make_shared<qsizetype>(0);
            const int step = m_faults.trickleBytes;
            QObject::connect(timer, &QTimer::timeout, s, [s, timer, offset, part, step] {
                s->write(part.mid(*offset, step));
                *offset += step;
                if (*offset >= part.size()) {
                    timer->stop();
                    s->disconnectFromHost();
                }
            });
            timer->start(m_faults.trickleMs);
            return;
        }
        s->write(part);
        s->disconnectFromHost();
    }

    QMutex m_mutex;
    QSemaphore m_ready;
    quint16 m_port = 0;
    std::map<QByteArray, Repo> m_repos;
    std::map<QByteArray, std::map<QByteArray, Repo>> m_branches;  // name -> branch -> its repository
    Faults m_faults;
    std::vector<Request> m_requests;
};

} // namespace hubtest
