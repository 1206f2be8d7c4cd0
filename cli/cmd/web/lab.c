/* The lab bench of the cluster page (cli/cmd/web/lab.h). */
#include "cli/cmd/web/lab.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/util/cli.h"
#include "common/json.h"

/* What deploy/cluster.sh may be asked to do, and to which node. */
static const char *const lab_verbs[] = {"kill", "stop", "start", "pause",
                                        "resume"};
static const char *const lab_nodes[] = {
    "broker-1", "broker-2",       "broker-3",       "broker-4",
    "broker-5", "broker-6",       "broker-7",       "broker-8",
    "broker-9", "controller-101", "controller-102", "controller-103"};

/* The allowlisted string equal to the n bytes at s, or NULL. */
static const char *allowed(const char *const *list, size_t n_list,
                           const char *s, size_t n)
{
    for (size_t i = 0; i < n_list; i++) {
        if (strlen(list[i]) == n && memcmp(list[i], s, n) == 0) {
            return list[i];
        }
    }
    return NULL;
}

/* dir/../../NAME of the binary's directory dir, into out; "" when it
 * does not fit. */
static void beside_root(const char *bin_dir, const char *name, char *out,
                        size_t cap)
{
    int n = snprintf(out, cap, "%s/../../%s", bin_dir, name);
    if (n < 0 || (size_t)n >= cap) {
        out[0] = '\0';
    }
}

/* The marker of `deploy/cluster.sh up` in data_dir names base_port. */
static bool marker_matches(const char *data_dir, int base_port)
{
    char path[PATH_MAX + 8];
    snprintf(path, sizeof path, "%s/lab", data_dir);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return false;
    }
    char line[64];
    bool match = false;
    while (!match && fgets(line, sizeof line, f) != NULL) {
        int v = 0;
        match = sscanf(line, "base_port=%d", &v) == 1 && v == base_port;
    }
    fclose(f);
    return match;
}

static bool find_paths(struct lab *l)
{
    char exe[PATH_MAX];
    if (realpath("/proc/self/exe", exe) == NULL) {
        snprintf(l->why, sizeof l->why, "cannot find this binary: %s",
                 strerror(errno));
        return false;
    }
    snprintf(l->cairn, sizeof l->cairn, "%s", exe);
    snprintf(l->bin_dir, sizeof l->bin_dir, "%s", dirname(exe));
    const char *env = getenv("CAIRN_CLUSTER_SH");
    if (env != NULL && env[0] != '\0') {
        snprintf(l->script, sizeof l->script, "%s", env);
    } else {
        beside_root(l->bin_dir, "deploy/cluster.sh", l->script,
                    sizeof l->script);
    }
    struct stat st;
    if (stat(l->script, &st) != 0 || !S_ISREG(st.st_mode) ||
        access(l->script, X_OK) != 0) {
        snprintf(l->why, sizeof l->why, "no deploy/cluster.sh to run");
        return false;
    }
    return true;
}

void lab_init(struct lab *l, bool flag, bool local, int base_port,
              const char *host)
{
    memset(l, 0, sizeof *l);
    l->next_id = 1;
    if (strcmp(host, "127.0.0.1") != 0) {
        snprintf(l->why, sizeof l->why,
                 "off: the page listens on %.64s, not 127.0.0.1", host);
        return;
    }
    if (!find_paths(l)) {
        return;
    }
    if (flag) {
        l->enabled = true;
        snprintf(l->why, sizeof l->why, "on: --lab");
        return;
    }
    char data[PATH_MAX];
    const char *env = getenv("CAIRN_DATA");
    if (env != NULL && env[0] != '\0') {
        snprintf(data, sizeof data, "%s", env);
    } else {
        beside_root(l->bin_dir, "data/cluster", data, sizeof data);
    }
    if (!local || !marker_matches(data, base_port)) {
        snprintf(l->why, sizeof l->why,
                 "off: not the local cluster of deploy/cluster.sh up "
                 "(start with --lab to force)");
        return;
    }
    l->enabled = true;
    snprintf(l->why, sizeof l->why, "on: the local cluster (base port %d)",
             base_port);
}

/* In the child: stdin from /dev/null, stdout and stderr to out_fd. */
static void child_exec(const struct lab *l, int out_fd,
                       const char *const *argv)
{
    int in = open("/dev/null", O_RDONLY);
    if (in >= 0) {
        dup2(in, 0);
    }
    dup2(out_fd, 1);
    dup2(out_fd, 2);
    /* Nothing of the page's (controller connections, ...) goes on into
     * the script or the nodes it starts. */
    closefrom(3);
    setenv("CAIRN_BIN", l->bin_dir, 0 /* keep the caller's */);
    execv(argv[0], (char *const *)argv);
    _exit(127);
}

/* Starts argv with its output to a pipe (out_fd, or /dev/null without);
 * the child's pid, or -1. */
static pid_t spawn(const struct lab *l, const char *const *argv, int *out_fd)
{
    int fds[2] = {-1, -1};
    if (out_fd != NULL && pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
        return -1;
    }
    int sink =
        out_fd != NULL ? fds[1] : open("/dev/null", O_WRONLY | O_CLOEXEC);
    pid_t pid = fork();
    if (pid == 0) {
        if (out_fd != NULL) {
            fcntl(sink, F_SETFL, 0); /* the child writes blocking */
        }
        child_exec(l, sink, argv);
    }
    if (sink >= 0) {
        close(sink);
    }
    if (pid < 0 && out_fd != NULL) {
        close(fds[0]);
    }
    if (out_fd != NULL) {
        *out_fd = pid < 0 ? -1 : fds[0];
    }
    return pid;
}

static struct lab_action *action_new(struct lab *l, const char *verb,
                                     const char *node, int64_t now_ms)
{
    uint64_t id = l->next_id++;
    struct lab_action *a = &l->actions[(id - 1) % LAB_ACTIONS_MAX];
    if (a->id != 0 && a->fd >= 0) {
        close(a->fd);
    }
    if (a->id != 0 && a->pid > 0) {
        /* Dropped off while running (64 actions within one's run): its
         * exit goes unread. */
        (void)waitpid(a->pid, NULL, WNOHANG);
    }
    memset(a, 0, sizeof *a);
    a->id = id;
    a->time_ms = now_ms;
    a->verb = verb;
    a->node = node;
    a->fd = -1;
    a->exit_code = -1;
    return a;
}

static int load_start(struct lab *l, int64_t now_ms, char *msg, size_t cap)
{
    if (l->load_pid > 0) {
        snprintf(msg, cap, "the load is already running (pid %d)",
                 (int)l->load_pid);
        return 409;
    }
    const char *argv[] = {l->cairn,
                          "bench",
                          "produce",
                          "--topic",
                          LAB_LOAD_TOPIC,
                          "--records",
                          "1000000000",
                          "--record-size",
                          "100",
                          "--acks",
                          "all",
                          "--rate",
                          LAB_LOAD_RATE,
                          "--partitions",
                          "1",
                          "--replication-factor",
                          "3",
                          "--config",
                          "min.insync.replicas=2",
                          NULL};
    pid_t pid = spawn(l, argv, NULL);
    if (pid < 0) {
        snprintf(msg, cap, "fork: %s", strerror(errno));
        return 500;
    }
    l->load_pid = pid;
    l->load_since_ms = now_ms;
    l->load_stop_ms = 0;
    struct lab_action *a = action_new(l, "load-start", "", now_ms);
    a->exit_code = 0;
    a->end_ms = now_ms;
    snprintf(msg, cap, "load started: pid %d, acks=all, %s records/s to %s",
             (int)pid, LAB_LOAD_RATE, LAB_LOAD_TOPIC);
    return 202;
}

static int load_stop(struct lab *l, int64_t now_ms, char *msg, size_t cap)
{
    if (l->load_pid <= 0) {
        snprintf(msg, cap, "no load is running");
        return 409;
    }
    kill(l->load_pid, SIGTERM);
    l->load_stop_ms = now_ms;
    struct lab_action *a = action_new(l, "load-stop", "", now_ms);
    a->exit_code = 0;
    a->end_ms = now_ms;
    snprintf(msg, cap, "load stopped: SIGTERM to pid %d", (int)l->load_pid);
    return 202;
}

int lab_run(struct lab *l, const char *action, size_t action_len,
            const char *node, size_t node_len, int64_t now_ms, char *msg,
            size_t cap)
{
    if (!l->enabled) {
        snprintf(msg, cap, "the lab bench is %s", l->why);
        return 403;
    }
    if (action_len == 10 && memcmp(action, "load-start", 10) == 0) {
        return load_start(l, now_ms, msg, cap);
    }
    if (action_len == 9 && memcmp(action, "load-stop", 9) == 0) {
        return load_stop(l, now_ms, msg, cap);
    }
    const char *verb =
        allowed(lab_verbs, ARRAY_LEN(lab_verbs), action, action_len);
    const char *name =
        allowed(lab_nodes, ARRAY_LEN(lab_nodes), node, node_len);
    if (verb == NULL || name == NULL) {
        snprintf(msg, cap,
                 "expected action kill, stop, start, pause, "
                 "resume, load-start or load-stop and node "
                 "broker-N or controller-10N");
        return 400;
    }
    const char *argv[] = {l->script, verb, name, NULL};
    int fd = -1;
    pid_t pid = spawn(l, argv, &fd);
    if (pid < 0) {
        snprintf(msg, cap, "fork: %s", strerror(errno));
        return 500;
    }
    struct lab_action *a = action_new(l, verb, name, now_ms);
    a->pid = pid;
    a->fd = fd;
    snprintf(msg, cap, "%s %s: started (action %llu)", verb, name,
             (unsigned long long)a->id);
    return 202;
}

static void read_output(struct lab_action *a)
{
    char buf[256];
    ssize_t r;
    while (a->fd >= 0 && (r = read(a->fd, buf, sizeof buf)) > 0) {
        size_t room = sizeof a->output - 1 - a->output_len;
        size_t n = (size_t)r < room ? (size_t)r : room;
        memcpy(a->output + a->output_len, buf, n);
        a->output_len += n;
        a->output[a->output_len] = '\0';
    }
}

static void reap_load(struct lab *l, int64_t now_ms)
{
    if (l->load_pid <= 0) {
        return;
    }
    if (waitpid(l->load_pid, NULL, WNOHANG) == l->load_pid) {
        l->load_pid = 0;
        return;
    }
    if (l->load_stop_ms > 0 && now_ms - l->load_stop_ms > 2000) {
        kill(l->load_pid, SIGKILL);
    }
}

void lab_reap(struct lab *l, int64_t now_ms)
{
    reap_load(l, now_ms);
    for (size_t i = 0; i < LAB_ACTIONS_MAX; i++) {
        struct lab_action *a = &l->actions[i];
        if (a->id == 0 || a->pid <= 0) {
            continue;
        }
        read_output(a);
        int status = 0;
        if (waitpid(a->pid, &status, WNOHANG) != a->pid) {
            continue;
        }
        read_output(a);
        if (a->fd >= 0) {
            close(a->fd);
            a->fd = -1;
        }
        a->pid = 0;
        a->end_ms = now_ms;
        a->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
}

static void action_json(struct json *j, const struct lab_action *a)
{
    json_object_begin(j);
    json_key(j, "id");
    json_int(j, (int64_t)a->id);
    json_key(j, "time_ms");
    json_int(j, a->time_ms);
    json_key(j, "end_ms");
    json_int_or_null(j, a->end_ms > 0, a->end_ms);
    json_key(j, "action");
    json_string(j, a->verb);
    json_key(j, "node");
    json_string(j, a->node);
    json_key(j, "state");
    json_string(j, a->pid > 0          ? "running"
                   : a->exit_code == 0 ? "ok"
                                       : "failed");
    json_key(j, "exit");
    json_int_or_null(j, a->pid <= 0 && a->exit_code >= 0, a->exit_code);
    json_key(j, "output");
    json_string(j, a->output);
    json_object_end(j);
}

static void load_json(struct json *j, const struct lab *l)
{
    json_object_begin(j);
    json_key(j, "running");
    json_bool(j, l->load_pid > 0);
    json_key(j, "pid");
    json_int_or_null(j, l->load_pid > 0, l->load_pid);
    json_key(j, "topic");
    json_string(j, LAB_LOAD_TOPIC);
    json_key(j, "rate");
    json_int(j, atoi(LAB_LOAD_RATE));
    json_key(j, "since_ms");
    json_int_or_null(j, l->load_pid > 0, l->load_since_ms);
    json_object_end(j);
}

void lab_json(const struct lab *l, FILE *out)
{
    struct json j;
    json_init(&j, out);
    json_object_begin(&j);
    json_key(&j, "enabled");
    json_bool(&j, l->enabled);
    json_key(&j, "why");
    json_string(&j, l->why);
    json_key(&j, "actions");
    json_array_begin(&j);
    uint64_t first =
        l->next_id > LAB_ACTIONS_MAX ? l->next_id - LAB_ACTIONS_MAX : 1;
    for (uint64_t id = first; l->enabled && id < l->next_id; id++) {
        action_json(&j, &l->actions[(id - 1) % LAB_ACTIONS_MAX]);
    }
    json_array_end(&j);
    json_key(&j, "load");
    load_json(&j, l);
    json_object_end(&j);
    json_finish(&j);
}

void lab_stop(struct lab *l)
{
    if (l->load_pid <= 0) {
        return;
    }
    kill(l->load_pid, SIGTERM);
    int64_t deadline = cli_mono_ms() + 2000;
    while (waitpid(l->load_pid, NULL, WNOHANG) == 0) {
        if (cli_mono_ms() >= deadline) {
            kill(l->load_pid, SIGKILL);
            (void)waitpid(l->load_pid, NULL, 0);
            break;
        }
        usleep(20 * 1000);
    }
    l->load_pid = 0;
}
