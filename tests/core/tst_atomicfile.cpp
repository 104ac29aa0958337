// The atomic writer: a new file appears whole, a replaced file is either all old or all new, and every
// failure (missing folder, a folder in the way, permission denied, a full disk) leaves the previous file
// byte for byte as it was, removes the temporary file and says why in one sentence.
//
// Permission and disk-full failures are real, not mocked: a child process drops to user "nobody" when the
// test runs as root (root ignores folder permissions), and a child caps its file size with RLIMIT_FSIZE so
// write() fails with EFBIG the way it fails with ENOSPC on a full disk.
#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <fstream>
#include <sstream>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "childprocess.h"
#include "core/io/formats/atomicfile.h"

using namespace attnscope;

namespace {

std::string readAll(const QString& path)
{
    std::ifstream in(path.toStdString(), std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void writePlain(const QString& path, const std::string& bytes)
{
    std::ofstream(path.toStdString(), std::ios::binary) << bytes;
}

// Names in `dir` other than the ones expected: a leftover temporary file shows up here.
QStringList entries(const QString& dir)
{
    return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot, QDir::Name);
}

} // namespace

class TestAtomicFile : public QObject {
    Q_OBJECT
private slots:
    void writesANewFile()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("new.txt");
        const Status s = writeFileAtomically(path.toStdString(), "hello\n");
        QVERIFY2(s.ok(), s.error().c_str());
        QCOMPARE(readAll(path), std::string("hello\n"));
        QCOMPARE(entries(dir.path()), QStringList{"new.txt"});
    }

    void streamsInPieces()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("big.bin");
        std::string expected;
        AtomicFile file(path.toStdString());
        QVERIFY(file.open().ok());
        for (int i = 0; i < 1000; ++i) {
            const std::string piece(1000, static_cast<char>('a' + i % 26));
            QVERIFY(file.write(piece).ok());
            expected += piece;
            if (i == 500) QVERIFY2(!QFile::exists(path), "nothing is visible before commit");
        }
        QVERIFY(file.commit().ok());
        QCOMPARE(readAll(path), expected);
        QCOMPARE(entries(dir.path()), QStringList{"big.bin"});
        QVERIFY2(!file.write("more").ok(), "a committed file takes no more bytes");
    }

    void replacesAndKeepsPermissions()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("secret.txt");
        writePlain(path, "old");
        QCOMPARE(::chmod(path.toUtf8().constData(), 0600), 0);
        QVERIFY(writeFileAtomically(path.toStdString(), "new contents").ok());
        QCOMPARE(readAll(path), std::string("new contents"));
        struct stat st {};
        QCOMPARE(::stat(path.toUtf8().constData(), &st), 0);
        QCOMPARE(st.st_mode & 0777, mode_t(0600));
    }

    void droppedWriterLeavesOldFile()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("keep.txt");
        writePlain(path, "precious");
        {
            AtomicFile file(path.toStdString());
            QVERIFY(file.open().ok());
            QVERIFY(file.write("half of the new").ok());
            // destroyed here without commit, as when an exception or an early return cuts a save short
        }
        QCOMPARE(readAll(path), std::string("precious"));
        QCOMPARE(entries(dir.path()), QStringList{"keep.txt"});
    }

    void followsSymbolicLinks()
    {
        QTemporaryDir dir;
        const QString real = dir.filePath("real.txt");
        const QString link = dir.filePath("link.txt");
        writePlain(real, "old");
        QVERIFY(QFile::link(real, link));
        QVERIFY(writeFileAtomically(link.toStdString(), "through the link").ok());
        QVERIFY(QFileInfo(link).isSymLink());
        QCOMPARE(readAll(real), std::string("through the link"));
    }

    void missingFolderIsOneSentence()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("no/such/folder/out.png");
        const Status s = writeFileAtomically(path.toStdString(), "x");
        QVERIFY(!s.ok());
        QVERIFY2(s.error().find("folder '" + dir.filePath("no/such/folder").toStdString() + "' does not exist") !=
                     std::string::npos, s.error().c_str());
        QVERIFY2(s.error().find("nothing was written") != std::string::npos, s.error().c_str());
        QCOMPARE(entries(dir.path()), QStringList{});
    }

    void folderInTheWayIsRefused()
    {
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath("taken/inside"));
        const Status s = writeFileAtomically(dir.filePath("taken").toStdString(), "x");
        QVERIFY(!s.ok());
        QVERIFY2(s.error().find("it is a folder") != std::string::npos, s.error().c_str());
        QVERIFY(QFileInfo(dir.filePath("taken/inside")).isDir());
        QCOMPARE(entries(dir.path()), QStringList{"taken"});
    }

    void readOnlyFolderLeavesOldFile()
    {
        QTemporaryDir dir;
        const QString folder = dir.filePath("locked");
        QVERIFY(QDir(dir.path()).mkdir("locked"));
        const QString path = folder + "/model.safetensors";
        writePlain(path, "the old model");
        QCOMPARE(::chmod(dir.path().toUtf8().constData(), 0755), 0);  // "nobody" may pass through
        QCOMPARE(::chmod(path.toUtf8().constData(), 0644), 0);
        QCOMPARE(::chmod(folder.toUtf8().constData(), 0555), 0);
        const std::string message = childtest::inChild([&] {
            if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) return std::string("cannot drop root");
            return writeFileAtomically(path.toStdString(), "a new model").error();
        });
        ::chmod(folder.toUtf8().constData(), 0755);
        QVERIFY2(message.find("permission is denied in the folder") != std::string::npos, message.c_str());
        QVERIFY2(message.find("the previous file is unchanged") != std::string::npos, message.c_str());
        QCOMPARE(readAll(path), std::string("the old model"));
        QCOMPARE(entries(folder), QStringList{"model.safetensors"});
    }

    void fullDiskLeavesOldFile()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath("export.svg");
        writePlain(path, "<svg>old</svg>");
        const std::string message = childtest::inChild([&] {
            // Past the limit write() fails with EFBIG instead of raising SIGXFSZ, as a full disk fails with ENOSPC.
            std::signal(SIGXFSZ, SIG_IGN);
            const rlimit cap{64 * 1024, 64 * 1024};
            if (::setrlimit(RLIMIT_FSIZE, &cap) != 0) return std::string("setrlimit failed");
            AtomicFile file(path.toStdString());
            Status s = file.open();
            const std::string chunk(16 * 1024, 'x');
            for (int i = 0; i < 16 && s.ok(); ++i) s = file.write(chunk);  // 256 KiB against a 64 KiB cap
            if (s.ok()) s = file.commit();
            const Status later = file.commit();  // the first failure sticks
            return later.error() == s.error() ? s.error() : "a later call forgot the failure: " + later.error();
        });
        QVERIFY2(message.find("cannot write '" + path.toStdString() + "'") != std::string::npos, message.c_str());
        QVERIFY2(message.find("larger than this system allows") != std::string::npos, message.c_str());
        QVERIFY2(message.find("the previous file is unchanged") != std::string::npos, message.c_str());
        QCOMPARE(readAll(path), std::string("<svg>old</svg>"));
        QCOMPARE(entries(dir.path()), QStringList{"export.svg"});
    }
};

QTEST_APPLESS_MAIN(TestAtomicFile)
#include "tst_atomicfile.moc"
