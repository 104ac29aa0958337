#include "core/hub/hubclient.h"

#include <QNetworkAccessManager>
#include <QNetworkProxyFactory>
#include <QNetworkReply>
#include <QNetworkRequest>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/hub/hfcache.h"
#include "core/hub/hubdownloadplan.h"

namespace attnscope {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxRedirects = 10;
constexpr std::int64_t kMaxApiAnswerBytes = 64 << 20;  // a file list, never this long

std::string text(const QString& s) { return s.toStdString(); }

QString encodedPath(const std::string& part)
{
    return QString::fromLatin1(QUrl::toPercentEncoding(QString::fromStdString(part), "/"));
}

// The header's value, or empty.
QByteArray header(QNetworkReply* reply, const char* name) { return reply->rawHeader(QByteArray(name)); }

} // namespace

HubDownloadOptions hubDownloadOptionsFromEnvironment()
{
    HubDownloadOptions options;
    options.cache = huggingFaceCacheFolder();
    options.endpoint = huggingFaceEndpoint();
    options.token = huggingFaceToken();
    return options;
}

HubDownload::HubDownload(std::string repo, std::string revision, HubDownloadOptions options, QObject* parent)
    : QObject(parent), m_repo(std::move(repo)), m_revision(std::move(revision)), m_options(std::move(options)),
      m_network(new QNetworkAccessManager(this))
{
    // http_proxy, https_proxy and no_proxy, as every other client on the machine.
    QNetworkProxyFactory::setUseSystemConfiguration(true);
    m_stallTimer.setSingleShot(true);
    connect(&m_stallTimer, &QTimer::timeout, this, [this] {
        m_stalled = true;
        if (m_reply) m_reply->abort();
    });
    m_lockTimer.setSingleShot(true);
    connect(&m_lockTimer, &QTimer::timeout, this, &HubDownload::fetchNext);
}

HubDownload::~HubDownload()
{
    if (m_reply) {
        m_reply->disconnect(this);
        m_reply->abort();
    }
    unlockBlob();
}

std::string HubDownload::snapshotFolder() const
{
    return (fs::path(hubRepoFolder(m_options.cache, m_repo)) / "snapshots" / m_commit).string();
}

QNetworkReply* HubDownload::send(const QUrl& url, bool head, std::int64_t from)
{
    QNetworkRequest request(url);
    request.setHeader(QNetworkRequest::UserAgentHeader, QStringLiteral("attnscope/" ATTNSCOPE_VERSION_TEXT));
    request.setRawHeader("Accept-Encoding", "identity");  // the bytes as stored, so their hash is the file's
    if (!m_options.token.empty() && url.host() == QUrl(QString::fromStdString(m_options.endpoint)).host())
        request.setRawHeader("Authorization", QByteArray("Bearer ") + QByteArray::fromStdString(m_options.token));
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                         head ? QNetworkRequest::ManualRedirectPolicy : QNetworkRequest::NoLessSafeRedirectPolicy);
    request.setMaximumRedirectsAllowed(kMaxRedirects);
    if (from > 0) request.setRawHeader("Range", QByteArray("bytes=") + QByteArray::number(qint64(from)) + "-");
    QNetworkReply* reply = head ? m_network->head(request) : m_network->get(request);
    m_reply = reply;
    return reply;
}

void HubDownload::start()
{
    m_running = true;
    m_clock.start();
    m_progressClock.start();
    if (huggingFaceOffline()) {
        fail("HF_HUB_OFFLINE is set, so nothing is downloaded; AttnScope opens what the cache holds (attnscope-cli models lists it).");
        return;
    }
    const QUrl url(QString::fromStdString(m_options.endpoint) + QStringLiteral("/api/models/") + encodedPath(m_repo) +
                   QStringLiteral("/revision/") + QString::fromLatin1(QUrl::toPercentEncoding(QString::fromStdString(m_revision))));
    QNetworkReply* reply = send(url, false);
    reply->setReadBufferSize(0);
    // A file list is a few kilobytes; an answer that keeps growing is cut off before it fills the memory.
    connect(reply, &QNetworkReply::readyRead, this, [this, reply] {
        if (reply->bytesAvailable() > kMaxApiAnswerBytes)
            fail("the hub's answer about " + m_repo + " is larger than " + std::to_string(kMaxApiAnswerBytes >> 20) + " MB, which no file list is.");
    });
    connect(reply, &QNetworkReply::finished, this, &HubDownload::revisionAnswered);
}

std::string HubDownload::httpProblem(QNetworkReply* reply, const std::string& what) const
{
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status == 401 || status == 403)
        return m_repo + " is gated or private (the hub answered " + std::to_string(status) + " for " + what +
               "): accept its terms on the hub, then give AttnScope a token with the HF_TOKEN environment variable "
               "or the file written by huggingface-cli login.";
    if (status == 404) return "the hub has no " + what + " (404); check the name, for example openai-community/gpt2.";
    if (status >= 400) return "the hub answered " + std::to_string(status) + " for " + what + ".";
    return "cannot reach the hub for " + what + " (" + text(reply->errorString()) + ").";
}

void HubDownload::revisionAnswered()
{
    QNetworkReply* reply = qobject_cast<QNetworkReply*>(sender());
    reply->deleteLater();
    if (!m_running) return;
    const std::string what = m_repo + " at revision '" + m_revision + "'";
    if (reply->error() != QNetworkReply::NoError) return fail(httpProblem(reply, what));
    const QByteArray body = reply->read(kMaxApiAnswerBytes);
    Result<RevisionInfo> info = parseRevisionInfo(std::string_view(body.constData(), std::size_t(body.size())), m_repo);
    if (!info) return fail(info.error());
    Result<std::vector<std::string>> plan = filesToDownload(*info, m_repo);
    if (!plan) return fail(plan.error());
    m_commit = info->commit;
    m_available = info->files;
    m_toHead = *plan;
    std::reverse(m_toHead.begin(), m_toHead.end());  // taken from the back
    headNext();
}

void HubDownload::headNext()
{
    if (m_toHead.empty()) {
        std::reverse(m_toFetch.begin(), m_toFetch.end());
        return fetchNext();
    }
    Entry entry;
    entry.name = m_toHead.back();
    m_toHead.pop_back();
    entry.url = QUrl(QString::fromStdString(m_options.endpoint) + QLatin1Char('/') + encodedPath(m_repo) + QStringLiteral("/resolve/") +
                     QString::fromStdString(m_commit) + QLatin1Char('/') + encodedPath(entry.name));
    QNetworkReply* reply = send(entry.url, true);
    connect(reply, &QNetworkReply::finished, this, [this, reply, entry] { headAnswered(reply, entry, 0); });
}

void HubDownload::headAnswered(QNetworkReply* reply, Entry entry, int redirects)
{
    reply->deleteLater();
    if (!m_running) return;
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QByteArray linkedEtag = header(reply, "X-Linked-Etag"), etag = header(reply, "ETag");
    const QUrl location = reply->attribute(QNetworkRequest::RedirectionTargetAttribute).toUrl();
    if (status >= 300 && status < 400 && linkedEtag.isEmpty() && etag.isEmpty()) {
        // A renamed repository answers with a redirect on the hub itself: ask there.
        if (redirects >= kMaxRedirects || location.isEmpty()) return fail("the hub sent " + entry.name + " round in redirects.");
        entry.url = reply->url().resolved(location);
        QNetworkReply* next = send(entry.url, true);
        connect(next, &QNetworkReply::finished, this, [this, next, entry, redirects] { headAnswered(next, entry, redirects + 1); });
        return;
    }
    if (status < 200 || status >= 400) return fail(httpProblem(reply, entry.name + " of " + m_repo));
    const std::optional<std::string> hash = etagHash(std::string(linkedEtag.isEmpty() ? etag.constData() : linkedEtag.constData()));
    if (!hash) return fail("the hub gave no usable hash for " + entry.name + " of " + m_repo + " (X-Linked-Etag or ETag), so it cannot be checked.");
    entry.etag = *hash;
    bool sizeOk = false;
    const QByteArray sizeText = header(reply, "X-Linked-Size").isEmpty() ? header(reply, "Content-Length") : header(reply, "X-Linked-Size");
    entry.size = sizeText.trimmed().toLongLong(&sizeOk);
    if (!sizeOk || entry.size < 0) return fail("the hub gave no size for " + entry.name + " of " + m_repo + ".");
    if (status >= 300) entry.url = reply->url().resolved(location);  // the bytes are elsewhere (a CDN)
    m_total += entry.size;
    m_toFetch.push_back(std::move(entry));
    headNext();
}

bool HubDownload::lockBlob(const std::string& etag)
{
    const std::string path = hubLockPath(m_options.cache, m_repo, etag);
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        fail("cannot write in the Hugging Face cache '" + m_options.cache + "' (" + std::string(std::strerror(errno)) + ").");
        return false;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        return false;
    }
    m_lockFd = fd;
    return true;
}

void HubDownload::unlockBlob()
{
    if (m_lockFd >= 0) {
        ::flock(m_lockFd, LOCK_UN);
        ::close(m_lockFd);
        m_lockFd = -1;
    }
}

void HubDownload::fetchNext()
{
    if (!m_running) return;
    if (m_toFetch.empty()) return succeed();
    m_current = m_toFetch.back();
    const std::string blob = hubBlobPath(m_options.cache, m_repo, m_current.etag);
    std::error_code ec;
    const auto complete = [&] { return fs::is_regular_file(blob, ec) && std::int64_t(fs::file_size(blob, ec)) == m_current.size; };
    if (complete()) return fileReady(false);
    if (!lockBlob(m_current.etag)) {
        if (!m_running) return;  // lockBlob failed the download
        m_lockTimer.start(200);  // another download holds this blob: look again shortly
        return;
    }
    // The lock may have waited for another download that has just completed the blob.
    if (complete()) {
        unlockBlob();
        return fileReady(false);
    }
    fs::create_directories(fs::path(blob).parent_path(), ec);
    if (ec) return fail("cannot write in the Hugging Face cache '" + m_options.cache + "' (" + ec.message() + ").");
    m_part.setFileName(QString::fromStdString(blob + ".incomplete"));
    if (!m_part.open(QIODevice::ReadWrite)) return fail("cannot write '" + text(m_part.fileName()) + "' (" + text(m_part.errorString()) + ").");
    if (m_part.size() > m_current.size) m_part.resize(0);
    // What an earlier, interrupted download left is hashed again, so the check covers the whole file.
    restartHash();
    m_part.seek(0);
    m_hash->addData(&m_part);
    m_partBytes = m_part.size();
    m_part.seek(m_partBytes);
    m_attempt = 0;
    fetchBytes();
}

void HubDownload::restartHash()
{
    if (m_current.etag.size() == 40) {
        m_hash = std::make_unique<QCryptographicHash>(QCryptographicHash::Sha1);
        m_hash->addData(QByteArray("blob ") + QByteArray::number(qint64(m_current.size)) + QByteArray(1, '\0'));
    } else {
        m_hash = std::make_unique<QCryptographicHash>(QCryptographicHash::Sha256);
    }
}

void HubDownload::fileReady(bool fetched)
{
    if (Status s = linkSnapshotFile(m_options.cache, m_repo, m_commit, m_current.name, m_current.etag); !s.ok()) return fail(s.error());
    m_toFetch.pop_back();
    m_done.push_back({m_current.name, m_current.size, fetched});
    m_receivedDone += m_current.size;
    m_partBytes = 0;
    emitProgress(true);
    if (m_current.name != "model.safetensors.index.json" || m_shardsPlanned) return fetchNext();
    // The index names the shards: ask about them now that it is here.
    m_shardsPlanned = true;
    const std::string blob = hubBlobPath(m_options.cache, m_repo, m_current.etag);
    QFile index(QString::fromStdString(blob));
    if (!index.open(QIODevice::ReadOnly)) return fail("cannot read '" + blob + "'.");
    const QByteArray json = index.read(kMaxApiAnswerBytes);
    Result<std::vector<std::string>> shards = shardsOfIndex(std::string_view(json.constData(), std::size_t(json.size())), m_available);
    if (!shards) return fail(shards.error());
    m_toHead.assign(shards->rbegin(), shards->rend());
    std::reverse(m_toFetch.begin(), m_toFetch.end());  // headNext reverses them back when it has asked about the shards
    headNext();
}

void HubDownload::fetchBytes()
{
    ++m_attempt;
    m_stalled = false;
    m_firstBytes = true;
    if (m_partBytes == m_current.size) {
        // Everything is here already (an earlier download stopped just before renaming).
        if (Status s = completeFile(); !s.ok()) return fail(s.error());
        return fileReady(true);
    }
    m_rangeAsked = m_partBytes > 0;
    QNetworkReply* reply = send(m_current.url, false, m_partBytes);
    reply->setReadBufferSize(1 << 20);
    connect(reply, &QNetworkReply::readyRead, this, &HubDownload::bytesArrived);
    connect(reply, &QNetworkReply::finished, this, &HubDownload::fetchFinished);
    m_stallTimer.start(m_options.stallMs);
}

void HubDownload::bytesArrived()
{
    QNetworkReply* reply = m_reply;
    if (!reply || !m_running) return;
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status != 200 && status != 206) return;  // an error page is not the file; fetchFinished says what it was
    if (m_firstBytes) {
        m_firstBytes = false;
        if (m_rangeAsked && status == 200) {
            // The server sends the whole file instead of the rest: start again from its first byte.
            m_part.resize(0);
            m_part.seek(0);
            m_partBytes = 0;
            restartHash();
        }
    }
    m_stallTimer.start(m_options.stallMs);
    while (reply->bytesAvailable() > 0) {
        const QByteArray chunk = reply->read(std::min<qint64>(reply->bytesAvailable(), 1 << 20));
        if (m_partBytes + chunk.size() > m_current.size) {
            m_stalled = false;
            reply->disconnect(this);
            reply->abort();
            reply->deleteLater();
            m_part.close();
            QFile::remove(m_part.fileName());
            return fail("the hub sent more bytes of " + m_current.name + " than its size, " + std::to_string(m_current.size) + "; the partial file was deleted.");
        }
        if (m_part.write(chunk) != chunk.size()) {
            const std::string why = text(m_part.errorString());
            reply->disconnect(this);
            reply->abort();
            reply->deleteLater();
            return fail("cannot write '" + text(m_part.fileName()) + "' (" + why + "); what arrived is kept there, and the download resumes from it next time.");
        }
        m_hash->addData(chunk);
        m_partBytes += chunk.size();
        m_fetchedFromNetwork += chunk.size();
    }
    emitProgress(false);
}

void HubDownload::fetchFinished()
{
    QNetworkReply* reply = qobject_cast<QNetworkReply*>(sender());
    m_stallTimer.stop();
    if (!reply) return;
    reply->deleteLater();
    if (!m_running) return;
    bytesArrived();  // anything still buffered
    if (!m_running) return;
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status == 416) {
        // The range asked for is past the server's file: start the file again from its first byte.
        m_part.resize(0);
        m_part.seek(0);
        m_partBytes = 0;
        restartHash();
        return retryOrFail("the server refused the range");
    }
    if (status >= 400) return fail(httpProblem(reply, m_current.name + " of " + m_repo));
    if (m_partBytes < m_current.size) {
        const std::string why = m_stalled ? "nothing arrived for " + std::to_string(m_options.stallMs) + " ms"
                                : reply->error() != QNetworkReply::NoError ? text(reply->errorString())
                                                                           : std::string("the connection closed early");
        return retryOrFail(why);
    }
    if (Status s = completeFile(); !s.ok()) return fail(s.error());
    fileReady(true);
}

void HubDownload::retryOrFail(const std::string& why)
{
    m_part.flush();
    if (m_attempt >= m_options.attempts)
        return fail(m_current.name + " of " + m_repo + " stopped at " + std::to_string(m_partBytes) + " of " + std::to_string(m_current.size) +
                    " bytes " + std::to_string(m_attempt) + " times (" + why + "); what arrived is kept, and the next download resumes from it.");
    // Resume from what arrived, after a pause that grows with each try.
    QTimer::singleShot(200 * m_attempt, this, [this] {
        if (m_running) fetchBytes();
    });
}

Status HubDownload::completeFile()
{
    const std::string got = m_hash->result().toHex().toStdString();
    const std::string partPath = text(m_part.fileName());
    m_part.close();
    if (got != m_current.etag) {
        QFile::remove(QString::fromStdString(partPath));
        unlockBlob();
        return Status::failure(m_current.name + " of " + m_repo + " does not match its hash (the hub says " + m_current.etag + ", the bytes give " + got +
                               "); it was deleted and not linked.");
    }
    const std::string blob = hubBlobPath(m_options.cache, m_repo, m_current.etag);
    std::error_code ec;
    fs::rename(partPath, blob, ec);
    unlockBlob();
    if (ec) return Status::failure("cannot move '" + partPath + "' to '" + blob + "' (" + ec.message() + ").");
    return {};
}

void HubDownload::emitProgress(bool force)
{
    if (!force && m_progressClock.elapsed() < 100) return;
    m_progressClock.restart();
    HubDownloadProgress p;
    p.file = m_current.name;
    p.fileReceived = m_partBytes;
    p.fileSize = m_current.size;
    const bool inFile = !m_toFetch.empty() && m_toFetch.back().name == m_current.name;
    p.received = m_receivedDone + (inFile ? m_partBytes : 0);
    p.total = m_total;
    const double seconds = m_clock.nsecsElapsed() / 1e9;
    p.bytesPerSecond = seconds > 0 ? double(m_fetchedFromNetwork) / seconds : 0;
    emit progress(p);
}

void HubDownload::fail(const std::string& sentence)
{
    if (!m_running) return;
    m_running = false;
    m_stallTimer.stop();
    m_lockTimer.stop();
    if (m_reply) {
        m_reply->disconnect(this);
        m_reply->abort();
        m_reply->deleteLater();
    }
    if (m_part.isOpen()) m_part.close();
    unlockBlob();
    emit finished(Status::failure(sentence));
}

void HubDownload::succeed()
{
    // A branch or tag now points at the commit; a download by commit leaves the refs alone.
    if (m_revision != m_commit)
        if (Status s = writeHubRef(m_options.cache, m_repo, m_revision, m_commit); !s.ok()) return fail(s.error());
    m_running = false;
    emit finished(Status{});
}

void HubDownload::cancel() { fail("the download of " + m_repo + " was cancelled; what was complete stays in the cache."); }

} // namespace attnscope
