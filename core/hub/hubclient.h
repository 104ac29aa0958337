#pragma once
// Downloads a model from the Hugging Face hub into the shared cache, as the hub's own clients do:
//
//   1. GET {endpoint}/api/models/{repo}/revision/{revision}: the commit and the file list;
//   2. for each file AttnScope needs (hubdownloadplan.h), HEAD {endpoint}/{repo}/resolve/{commit}/{file}
//      without following redirects: the hash (X-Linked-Etag for large files, their SHA-256, else ETag, a
//      git blob's SHA-1), the size (X-Linked-Size, else Content-Length) and where the bytes are (Location);
//   3. GET the bytes into blobs/HASH.incomplete, resuming with a range request from what is there after a
//      dropped or stalled connection, check the hash, rename to blobs/HASH, link snapshots/COMMIT/FILE;
//   4. write refs/REVISION last.
//
// A file already in blobs/ is linked without being fetched. While a blob is fetched, .locks/ holds a lock
// on it (flock, as the hub's Python client takes), so two downloads of the same repository at once wait for
// each other instead of writing the same file. Everything runs on the calling thread's event loop and
// never waits on it: the window keeps answering while a model arrives. This is AttnScope's only network
// code and it runs only when a person asks for a download; loading models never touches the network.
#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QFile>
#include <QObject>
#include <QPointer>
#include <QTimer>
#include <QUrl>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"

class QNetworkAccessManager;
class QNetworkReply;

namespace attnscope {

struct HubDownloadOptions {
    std::string cache;     // the Hugging Face cache folder
    std::string endpoint;  // e.g. https://huggingface.co
    std::string token;     // sent as a bearer token when not empty
    int stallMs = 30'000;  // a connection that brings nothing for this long is dropped and resumed
    int attempts = 5;      // tries per file before the download gives up
};

// The options the hub's own clients take from the environment: the cache (huggingFaceCacheFolder), the
// endpoint (HF_ENDPOINT) and the token (HF_TOKEN or the token file); the rest as above.
HubDownloadOptions hubDownloadOptionsFromEnvironment();

struct HubDownloadProgress {
    std::string file;                   // the file being fetched
    std::int64_t fileReceived = 0, fileSize = 0;
    std::int64_t received = 0, total = 0;  // every file of the download (sizes known from step 2)
    double bytesPerSecond = 0;          // over the bytes fetched from the network so far
};

struct HubDownloadedFile {
    std::string name;
    std::int64_t bytes = 0;
    bool fetched = false;  // false: its blob was already in the cache
};

class HubDownload : public QObject {
    Q_OBJECT
public:
    HubDownload(std::string repo, std::string revision, HubDownloadOptions options, QObject* parent = nullptr);
    ~HubDownload() override;

    void start();
    // Stops at once. Nothing complete is removed; the file being fetched stays as blobs/HASH.incomplete,
    // from which the next download resumes.
    void cancel();

    const std::string& repo() const { return m_repo; }
    const std::string& revision() const { return m_revision; }
    const std::string& commit() const { return m_commit; }
    std::string snapshotFolder() const;
    const std::vector<HubDownloadedFile>& files() const { return m_done; }
    bool isRunning() const { return m_running; }

signals:
    void progress(const attnscope::HubDownloadProgress& progress);
    // Once, with the sentence when it failed or was cancelled.
    void finished(const attnscope::Status& status);

private:
    struct Entry {
        std::string name;
        std::string etag;
        std::int64_t size = -1;
        QUrl url;  // where the bytes are
    };

    QNetworkReply* send(const QUrl& url, bool head, std::int64_t from = 0);
    void revisionAnswered();
    void headNext();
    void headAnswered(QNetworkReply* reply, Entry entry, int redirects);
    void fetchNext();
    void fetchBytes();
    void bytesArrived();
    void fetchFinished();
    void retryOrFail(const std::string& why);
    void restartHash();
    Status completeFile();
    void fileReady(bool fetched);
    void fail(const std::string& sentence);
    void succeed();
    std::string httpProblem(QNetworkReply* reply, const std::string& what) const;
    bool lockBlob(const std::string& etag);
    void unlockBlob();
    void emitProgress(bool force);

    std::string m_repo, m_revision;
    HubDownloadOptions m_options;
    QNetworkAccessManager* m_network;
    QPointer<QNetworkReply> m_reply;
    bool m_running = false;

    std::string m_commit;
    std::vector<std::string> m_available;  // every top-level file at the commit
    std::vector<std::string> m_toHead;     // names still to ask about
    std::vector<Entry> m_toFetch;          // answered, waiting for their bytes
    std::vector<HubDownloadedFile> m_done;
    bool m_shardsPlanned = false;

    // The file being fetched.
    Entry m_current;
    QFile m_part;
    std::unique_ptr<QCryptographicHash> m_hash;  // SHA-1 of a git blob (40-digit ETag) or SHA-256
    std::int64_t m_partBytes = 0;   // bytes in m_part
    bool m_rangeAsked = false;
    bool m_firstBytes = true;
    bool m_stalled = false;
    int m_attempt = 0;
    int m_lockFd = -1;
    QTimer m_stallTimer;
    QTimer m_lockTimer;

    std::int64_t m_total = 0, m_receivedDone = 0, m_fetchedFromNetwork = 0;
    QElapsedTimer m_clock, m_progressClock;
};

} // namespace attnscope
