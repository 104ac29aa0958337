#pragma once
// Runs part of a test in a forked child, for limits that must not touch the test process itself
// (RLIMIT_AS, RLIMIT_FSIZE, dropping root). Only for single-threaded test executables
// (QTEST_APPLESS_MAIN): fork copies one thread.
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace childtest {

// Calls `body` (returning std::string) in a child and returns what it returned, or a sentence saying
// how the child died (a crash, an abort on a failed allocation) so the test fails with a reason.
template <class F>
std::string inChild(F body)
{
    int fds[2];
    if (::pipe(fds) != 0) return "pipe failed";
    const pid_t pid = ::fork();
    if (pid < 0) return "fork failed";
    if (pid == 0) {
        ::close(fds[0]);
        const std::string message = body();
        for (std::size_t done = 0; done < message.size();) {
            const ssize_t n = ::write(fds[1], message.data() + done, message.size() - done);
            if (n <= 0) break;
            done += static_cast<std::size_t>(n);
        }
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string message;
    char buffer[4096];
    for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) return "the child died of signal " + std::to_string(WTERMSIG(status)) + " after: " + message;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return "the child exited with " + std::to_string(WEXITSTATUS(status)) + " after: " + message;
    return message;
}

} // namespace childtest
