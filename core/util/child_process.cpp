#include "util/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace stepscope {

namespace {

constexpr size_t kStderrKeptBytes = 16 * 1024;

void closeQuietly(int& fd) {
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
}

std::string systemError(const std::string& what, int error) {
    return what + ": " + std::strerror(error);
}

// This process's environment with `extra` ("NAME=value") replacing or adding entries.
std::vector<std::string> mergedEnvironment(const std::vector<std::string>& extra) {
    std::vector<std::string> merged;
    auto nameOf = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
    for (char** entry = environ; entry && *entry; ++entry) {
        const std::string text(*entry);
        bool replaced = false;
        for (const auto& added : extra) {
            replaced = replaced || nameOf(added) == nameOf(text);
        }
        if (!replaced) {
            merged.push_back(text);
        }
    }
    merged.insert(merged.end(), extra.begin(), extra.end());
    return merged;
}

std::vector<char*> pointersTo(std::vector<std::string>& strings) {
    std::vector<char*> pointers;
    for (auto& text : strings) {
        pointers.push_back(text.data());
    }
    pointers.push_back(nullptr);
    return pointers;
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv,
                           const std::vector<std::string>& extraEnvironment) {
    if (argv.empty()) {
        throw std::invalid_argument("ChildProcess: no program given");
    }
    // stdin is a socket so that writing to a child that has already exited
    // fails with EPIPE (MSG_NOSIGNAL) instead of raising SIGPIPE here.
    int input[2], output[2], error[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, input) != 0) {
        throw std::runtime_error(systemError("socketpair", errno));
    }
    if (::pipe2(output, O_CLOEXEC) != 0 || ::pipe2(error, O_CLOEXEC) != 0) {
        throw std::runtime_error(systemError("pipe", errno));
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, input[1], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, output[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, error[1], STDERR_FILENO);
    // Its own process group, so that terminate() reaches what it starts too
    // (torch.compile's compiler workers).
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);

    std::vector<std::string> arguments = argv;
    std::vector<std::string> environment = mergedEnvironment(extraEnvironment);
    const auto argPointers = pointersTo(arguments);
    const auto envPointers = pointersTo(environment);
    const int status = ::posix_spawnp(&pid_, argv[0].c_str(), &actions, &attributes,
                                      argPointers.data(), envPointers.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    ::close(input[1]);
    ::close(output[1]);
    ::close(error[1]);
    stdin_ = input[0];
    stdout_ = output[0];
    stderr_ = error[0];
    if (status != 0) {
        pid_ = -1;
        closeQuietly(stdin_);
        closeQuietly(stdout_);
        closeQuietly(stderr_);
        throw std::runtime_error(systemError("cannot start '" + argv[0] + "'", status));
    }
}

ChildProcess::~ChildProcess() {
    if (pid_ > 0 && !exited_) {
        kill();
        wait(std::chrono::milliseconds(5000));
    }
    closeQuietly(stdin_);
    closeQuietly(stdout_);
    closeQuietly(stderr_);
}

void ChildProcess::writeInputAndClose(const std::string& text) {
    size_t written = 0;
    while (stdin_ >= 0 && written < text.size()) {
        const ssize_t count =
            ::send(stdin_, text.data() + written, text.size() - written, MSG_NOSIGNAL);
        if (count < 0 && errno == EINTR) {
            continue;
        }
        if (count <= 0) {
            break;  // the child has gone; what it wrote to stderr says why
        }
        written += size_t(count);
    }
    closeQuietly(stdin_);
}

void ChildProcess::drain(std::chrono::milliseconds timeout) {
    pollfd fds[2] = {{stdout_, POLLIN, 0}, {stderr_, POLLIN, 0}};
    const int ready = ::poll(fds, 2, int(timeout.count()));
    if (ready <= 0) {
        return;
    }
    char buffer[65536];
    if (stdout_ >= 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
        const ssize_t count = ::read(stdout_, buffer, sizeof buffer);
        if (count > 0) {
            pending_.append(buffer, size_t(count));
            size_t newline;
            while ((newline = pending_.find('\n')) != std::string::npos) {
                lines_.push_back(pending_.substr(0, newline));
                pending_.erase(0, newline + 1);
            }
        } else if (count == 0 || errno != EINTR) {
            closeQuietly(stdout_);
            stdoutClosed_ = true;
            if (!pending_.empty()) {  // a last line without its newline
                lines_.push_back(std::move(pending_));
                pending_.clear();
            }
        }
    }
    if (stderr_ >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
        const ssize_t count = ::read(stderr_, buffer, sizeof buffer);
        if (count > 0) {
            errorText_.append(buffer, size_t(count));
            if (errorText_.size() > 2 * kStderrKeptBytes) {
                errorText_.erase(0, errorText_.size() - kStderrKeptBytes);
            }
        } else if (count == 0 || errno != EINTR) {
            closeQuietly(stderr_);
        }
    }
}

std::optional<std::string> ChildProcess::readLine(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (lines_.empty() && !stdoutClosed_) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            break;
        }
        drain(left);
    }
    if (lines_.empty()) {
        return std::nullopt;
    }
    std::string line = std::move(lines_.front());
    lines_.pop_front();
    return line;
}

void ChildProcess::terminate() {
    if (pid_ > 0 && !exited_) {
        ::kill(-pid_, SIGTERM);
    }
}

void ChildProcess::kill() {
    if (pid_ > 0 && !exited_) {
        ::kill(-pid_, SIGKILL);
    }
}

bool ChildProcess::wait(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (pid_ > 0 && !exited_) {
        const pid_t done = ::waitpid(pid_, &waitStatus_, WNOHANG);
        if (done == pid_) {
            exited_ = true;
            break;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
        // Keep reading while waiting: a child blocked on a full pipe never exits.
        if (stdout_ >= 0 || stderr_ >= 0) {
            drain(std::chrono::milliseconds(20));
        } else {
            ::usleep(20000);
        }
    }
    // What it wrote just before exiting; bounded, since a process it started
    // may still hold the pipes open.
    const auto drained = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while ((stdout_ >= 0 || stderr_ >= 0) && std::chrono::steady_clock::now() < drained) {
        drain(std::chrono::milliseconds(50));
    }
    return true;
}

std::optional<int> ChildProcess::exitStatus() const {
    if (exited_ && WIFEXITED(waitStatus_)) {
        return WEXITSTATUS(waitStatus_);
    }
    return std::nullopt;
}

std::string ChildProcess::exitDescription() const {
    if (!exited_) {
        return "still running";
    }
    if (WIFSIGNALED(waitStatus_)) {
        const int signal = WTERMSIG(waitStatus_);
        return "killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
    }
    return "exit status " + std::to_string(WEXITSTATUS(waitStatus_));
}

std::string ChildProcess::stderrTail(size_t lines) const {
    size_t end = errorText_.find_last_not_of("\r\n");
    if (end == std::string::npos) {
        return "";
    }
    size_t start = end + 1;
    for (size_t kept = 0; kept < lines && start > 0; ++kept) {
        const size_t newline = errorText_.rfind('\n', start - 1);
        start = newline == std::string::npos ? 0 : newline;
    }
    if (start > 0) {
        ++start;  // after the newline that ends the line before
    }
    return errorText_.substr(start, end + 1 - start);
}

}  // namespace stepscope
