/* Test helper: child processes of tests and benchmarks (client scripts,
 * `cairn bench`): finding a script in the source tree, starting it, and
 * waiting for it against a deadline. Each child dies with the thread that
 * started it (PR_SET_PDEATHSIG), so a crashed test leaves none behind.
 * Reports failures by return value; callers assert or fail. */
#ifndef CAIRN_TESTS_CHILD_H
#define CAIRN_TESTS_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The source file rel (a path from the repository root) into out: under
 * $CAIRN_SRC if set, else three levels above the running binary
 * (build/<variant>/{tests,bench}/<binary>), else relative to this file's
 * compile-time path (the repository root, where make runs). False if it
 * is not readable there; out then holds the last path tried. */
bool child_source_path(const char *rel, char *out, size_t cap);

/* Forks and execs exe with argv, adding env (NAME=value strings,
 * NULL-terminated; env may be NULL) to the environment. The child's
 * stdout goes into a pipe whose read end is put in *out_fd if out_fd is
 * not NULL, else to log_path; its stderr goes to log_path (appended)
 * unless that is NULL, then it is inherited. Returns the pid, or -1 with
 * errno set if the pipe or fork failed. */
pid_t child_spawn(const char *exe, char *const argv[], char *const env[],
                  const char *log_path, int *out_fd);

/* Waits for pid until deadline_ms (a cluster_now_ms() value), polling,
 * then SIGKILLs and reaps it. Returns its wait status, or -1 if it had to
 * be killed. */
int child_wait(pid_t pid, uint64_t deadline_ms);

#endif
