#pragma once
// Runs attnscope-cli as its own process, the way a script would, for every test in tests/cli.
// ATTNSCOPE_CLI is the executable's path, defined by tests/cli/CMakeLists.txt.
#include <QByteArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QStringList>

#include <csignal>

#include <sys/resource.h>

namespace clitest {

struct Run {
    bool finished = false;  // false: it did not finish within the time allowed and was killed
    QProcess::ExitStatus status = QProcess::CrashExit;
    int exitCode = -1;      // -1 if it did not finish, -2 if it crashed, else what it returned
    QByteArray out, err;
};

struct RunOptions {
    QByteArray stdinData;  // written to its standard input, which is then closed either way
    // A bound for calling a run hung, not a speed requirement: a sanitizer build on a machine busy with
    // another build runs a command many times slower than a quiet native one.
    int timeoutMs = 300'000;
    QProcessEnvironment environment;  // empty: the test's own environment
    // > 0: the largest file the CLI may write (RLIMIT_FSIZE, SIGXFSZ ignored), so writing past it fails
    // the way it fails on a full disk.
    long fileSizeLimitBytes = 0;
};

inline Run runCli(const QStringList& args, const RunOptions& options = {})
{
    QProcess p;
    if (!options.environment.isEmpty()) p.setProcessEnvironment(options.environment);
    if (options.fileSizeLimitBytes > 0)
        p.setChildProcessModifier([limit = options.fileSizeLimitBytes] {
            std::signal(SIGXFSZ, SIG_IGN);  // an ignored signal stays ignored across exec
            const rlimit cap{static_cast<rlim_t>(limit), static_cast<rlim_t>(limit)};
            ::setrlimit(RLIMIT_FSIZE, &cap);
        });
    p.start(QStringLiteral(ATTNSCOPE_CLI), args);
    p.waitForStarted();
    if (!options.stdinData.isEmpty()) p.write(options.stdinData);
    p.closeWriteChannel();  // a command that reads standard input sees its end instead of waiting
    Run r;
    if (!p.waitForFinished(options.timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return r;
    }
    r.finished = true;
    r.status = p.exitStatus();
    r.exitCode = r.status == QProcess::NormalExit ? p.exitCode() : -2;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

// A run's standard output as one JSON object; a failed run's standard error goes to the test's log first.
inline QJsonObject parse(const Run& r)
{
    if (r.exitCode != 0) qWarning("%s", r.err.constData());
    return QJsonDocument::fromJson(r.out).object();
}

} // namespace clitest
