/* See tests/lib/repl_load.h. */
#include "tests/lib/repl_load.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "tests/lib/child.h"

#define REPL_LOAD_SCRIPT "tests/integration/clients/repl_load.py"
#define REPL_LOAD_PYTHON "/usr/bin/python3"

bool repl_load_start(struct repl_load *l, const struct cluster *c,
                     const char *topic, int rate)
{
    memset(l, 0, sizeof *l);
    for (int i = 0; i < REPL_LOAD_PARTITIONS_MAX; i++) {
        l->acked_max[i] = -1;
    }
    snprintf(l->topic, sizeof l->topic, "%s", topic);
    if (!child_source_path(REPL_LOAD_SCRIPT, l->script, sizeof l->script)) {
        return false;
    }
    char boot[512], r[16];
    cluster_bootstrap(c, boot, sizeof boot);
    snprintf(r, sizeof r, "%d", rate);
    snprintf(l->out, sizeof l->out, "%s/acked.txt", c->dir);
    snprintf(l->stop, sizeof l->stop, "%s/stop-load", c->dir);
    snprintf(l->log, sizeof l->log, "%s/load.log", c->dir);
    char *argv[] = {"python3", l->script, "produce", boot, l->topic, l->out,
                    l->stop, r, NULL};
    l->pid = child_spawn(REPL_LOAD_PYTHON, argv, NULL, l->log, NULL);
    if (l->pid < 0) {
        l->pid = 0;
        return false;
    }
    return true;
}

long repl_load_acked(struct repl_load *l)
{
    FILE *f = fopen(l->out, "r");
    if (f == NULL) {
        return l->acked;
    }
    if (fseek(f, l->pos, SEEK_SET) != 0) {
        fclose(f);
        return -1;
    }
    char line[256];
    long rv = 0;
    while (rv == 0 && fgets(line, sizeof line, f) != NULL) {
        size_t len = strlen(line);
        if (len == 0 || line[len - 1] != '\n') {
            break; /* still being written */
        }
        l->pos += (long)len;
        int partition = -1;
        long long offset = -1;
        if (strncmp(line, "ERR", 3) == 0) {
            l->failed++;
        } else if (sscanf(line, "%d %lld", &partition, &offset) == 2 &&
                   partition >= 0 && partition < REPL_LOAD_PARTITIONS_MAX) {
            l->acked++;
            if (offset > l->acked_max[partition]) {
                l->acked_max[partition] = offset;
            }
        } else {
            rv = -1;
        }
    }
    fclose(f);
    return rv < 0 ? -1 : l->acked;
}

bool repl_load_exited(struct repl_load *l)
{
    if (l->pid > 0 && waitpid(l->pid, NULL, WNOHANG) == l->pid) {
        l->pid = 0;
        return true;
    }
    return l->pid == 0;
}

void repl_load_log_tail(const struct repl_load *l, char *out, size_t cap)
{
    out[0] = '\0';
    FILE *f = fopen(l->log, "r");
    if (f == NULL) {
        return;
    }
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        long from = size > (long)cap - 1 ? size - ((long)cap - 1) : 0;
        if (fseek(f, from, SEEK_SET) == 0) {
            size_t n = fread(out, 1, cap - 1, f);
            out[n] = '\0';
        }
    }
    fclose(f);
}

int repl_load_stop(struct repl_load *l, uint64_t deadline_ms)
{
    FILE *f = fopen(l->stop, "w");
    if (f != NULL) {
        fclose(f);
    }
    int status = l->pid > 0 ? child_wait(l->pid, deadline_ms) : -1;
    l->pid = 0;
    (void)repl_load_acked(l);
    return status;
}

int repl_load_verify(const struct repl_load *l, const struct cluster *c,
                     uint64_t deadline_ms, char *text, size_t cap)
{
    char boot[512], out[REPL_LOAD_PATH_BYTES + 16];
    cluster_bootstrap(c, boot, sizeof boot);
    snprintf(out, sizeof out, "%s/verify.out", c->dir);
    char *argv[] = {"python3", (char *)(uintptr_t)l->script, "verify", boot,
                    (char *)(uintptr_t)l->topic, (char *)(uintptr_t)l->out,
                    NULL};
    pid_t pid = child_spawn(REPL_LOAD_PYTHON, argv, NULL, out, NULL);
    int status = pid > 0 ? child_wait(pid, deadline_ms) : -1;
    text[0] = '\0';
    FILE *f = fopen(out, "r");
    if (f != NULL) {
        size_t n = fread(text, 1, cap - 1, f);
        text[n] = '\0';
        fclose(f);
    }
    return status;
}

void repl_load_kill(struct repl_load *l)
{
    if (l->pid > 0) {
        kill(l->pid, SIGKILL);
        waitpid(l->pid, NULL, 0);
        l->pid = 0;
    }
}
