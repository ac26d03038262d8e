#pragma once

#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace stepscope {

// A child process with pipes to its stdin, stdout and stderr (POSIX). Its
// stdout is read line by line; stderr is kept as a bounded tail for error
// messages. The destructor kills a child that is still running.
class ChildProcess {
public:
    // Starts `argv[0]` (looked up on PATH) with `extraEnvironment`
    // ("NAME=value") added to this process's environment. Throws
    // std::runtime_error when it cannot be started (for example, no such file).
    ChildProcess(const std::vector<std::string>& argv,
                 const std::vector<std::string>& extraEnvironment = {});
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    // Writes all of `text` to the child's stdin, then closes it.
    void writeInputAndClose(const std::string& text);

    // The next line of stdout (without its newline), waiting at most
    // `timeout`. nullopt on timeout or at the end of stdout (see atEnd()).
    std::optional<std::string> readLine(std::chrono::milliseconds timeout);
    bool atEnd() const { return stdoutClosed_ && pending_.empty(); }

    // Asks the child to stop (SIGTERM), then kills it (SIGKILL).
    void terminate();
    void kill();

    // Waits for the child to exit, at most `timeout`; true once it has.
    bool wait(std::chrono::milliseconds timeout);
    // After wait(): "exit status 1", "killed by signal 9 (Killed)".
    std::string exitDescription() const;
    std::optional<int> exitStatus() const;  // nullopt when killed by a signal

    // The last `lines` lines the child wrote to stderr.
    std::string stderrTail(size_t lines = 20) const;

    int pid() const { return pid_; }

private:
    void drain(std::chrono::milliseconds timeout);

    int pid_ = -1;
    int stdin_ = -1;
    int stdout_ = -1;
    int stderr_ = -1;
    bool stdoutClosed_ = false;
    bool exited_ = false;
    int waitStatus_ = 0;
    std::string pending_;  // stdout bytes after the last complete line
    std::deque<std::string> lines_;
    std::string errorText_;  // the end of stderr, bounded
};

}  // namespace stepscope
