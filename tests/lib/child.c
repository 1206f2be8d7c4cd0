/* Test helper: child processes (tests/lib/child.h). */
#include "tests/lib/child.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/assert.h"
#include "tests/lib/cluster.h"

#define CHILD_WAIT_POLL_MS 50
#define CHILD_PATH_BYTES 4096

bool child_source_path(const char *rel, char *out, size_t cap)
{
    const char *src = getenv("CAIRN_SRC");
    if (src != NULL && src[0] != '\0') {
        snprintf(out, cap, "%s/%s", src, rel);
        return access(out, R_OK) == 0;
    }
    char exe[CHILD_PATH_BYTES];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        /* build/<variant>/tests/integration_tests,
         * build/<variant>/bench/bench_groups */
        snprintf(out, cap, "%s/../../../%s", dirname(exe), rel);
        if (access(out, R_OK) == 0) {
            return true;
        }
    }
    char here[CHILD_PATH_BYTES];
    snprintf(here, sizeof here, "%s", __FILE__); /* tests/lib/child.c */
    snprintf(out, cap, "%s/../../%s", dirname(here), rel);
    return access(out, R_OK) == 0;
}

/* In the child: where its output goes, then exec. */
static NORETURN void child_exec(const char *exe, char *const argv[],
                       char *const env[], const char *log_path, int out_w)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (log_path != NULL) {
        int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            if (out_w < 0) {
                dup2(fd, 1);
            }
            dup2(fd, 2);
            close(fd);
        }
    }
    if (out_w >= 0) {
        dup2(out_w, 1);
        close(out_w);
    }
    for (size_t i = 0; env != NULL && env[i] != NULL; i++) {
        putenv(env[i]);
    }
    execv(exe, argv);
    _exit(127);
}

pid_t child_spawn(const char *exe, char *const argv[], char *const env[],
                  const char *log_path, int *out_fd)
{
    int fds[2] = {-1, -1};
    if (out_fd != NULL && pipe(fds) != 0) {
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        int err = errno;
        if (out_fd != NULL) {
            close(fds[0]);
            close(fds[1]);
        }
        errno = err;
        return -1;
    }
    if (pid == 0) {
        if (out_fd != NULL) {
            close(fds[0]);
        }
        child_exec(exe, argv, env, log_path, fds[1]);
    }
    if (out_fd != NULL) {
        close(fds[1]);
        *out_fd = fds[0];
    }
    return pid;
}

int child_wait(pid_t pid, uint64_t deadline_ms)
{
    int status = 0;
    for (;;) {
        pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid) {
            return status;
        }
        if (cluster_now_ms() >= deadline_ms) {
            break;
        }
        struct timespec ts = {0, CHILD_WAIT_POLL_MS * 1000000L};
        nanosleep(&ts, NULL); /* an early wake only shortens a poll */
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}
