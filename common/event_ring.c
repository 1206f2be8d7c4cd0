/* See event_ring.h. */
#include "common/event_ring.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/rc.h"

_Static_assert(EVENT_RING_CAP > 1, "the newest two records take two slots");
_Static_assert(20 + 1 + 20 + 1 + 20 + 1 + 11 + 1 + EVENT_TEXT_BYTES + 1 <=
                   EVENT_LINE_BYTES_MAX,
               "a record's line must fit its buffer");

void event_ring_init(struct event_ring *r)
{
    memset(r->recs, 0, sizeof r->recs);
    r->next_seq = 1;
    r->fd = -1;
    r->path[0] = '\0';
    r->file_lines = 0;
    r->file_repeats = 0;
    r->batch_depth = 0;
    r->batch_len = 0;
    pthread_mutex_init(&r->lock, NULL);
}

static struct event_record *ring_slot(struct event_ring *r, uint64_t seq)
{
    return &r->recs[(seq - 1) % EVENT_RING_CAP];
}

/* The record with seq s, or NULL if its slot holds another. */
static struct event_record *ring_at(struct event_ring *r, uint64_t s)
{
    struct event_record *rec = ring_slot(r, s);
    return rec->seq == s ? rec : NULL;
}

/* rec as a line of the text form, with its newline; returns its length. */
static size_t format_line(const struct event_record *rec,
                          char buf[EVENT_LINE_BYTES_MAX])
{
    int n = snprintf(buf, EVENT_LINE_BYTES_MAX,
                     "%" PRIu64 " %" PRId64 " %" PRId64 " %" PRIu32 "%s ",
                     rec->seq, rec->unix_ms, rec->last_ms, rec->repeats,
                     rec->routine ? "r" : "");
    ASSERT(n > 0 && (size_t)n < EVENT_LINE_BYTES_MAX - EVENT_TEXT_BYTES);
    size_t len = (size_t)n;
    for (const char *c = rec->text; *c != '\0'; c++) {
        unsigned char u = (unsigned char)*c;
        buf[len++] = (char)(u < 0x20 || u == 0x7f ? '?' : u);
    }
    buf[len++] = '\n';
    buf[len] = '\0';
    return len;
}

/* --- The file ----------------------------------------------------------- */

static bool write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            if (n == 0) {
                errno = EIO;
            }
            return false;
        }
        buf += n;
        len -= (size_t)n;
    }
    return true;
}

/* Stops persisting after a failure; returns errno for the push to tell. */
static int file_failed(struct event_ring *r)
{
    int err = errno != 0 ? errno : EIO;
    close(r->fd);
    r->fd = -1;
    return err;
}

#define EVENT__REWRITE_CHUNK_LINES 64u

/* Writes the ring's records to a new file renamed over path, then appends
 * to it; locked (or before the ring is shared). 0 or errno. */
static int file_rewrite(struct event_ring *r)
{
    char tmp[EVENT_PATH_BYTES_MAX + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", r->path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return errno;
    }
    uint64_t next = r->next_seq;
    uint64_t s = next > EVENT_RING_CAP ? next - EVENT_RING_CAP : 1;
    uint32_t lines = 0;
    /* Lines go out EVENT__REWRITE_CHUNK_LINES to a write(2), not one each:
     * a controller moving 30,000 leaders rewrites the file 30 times. */
    char chunk[EVENT__REWRITE_CHUNK_LINES * EVENT_LINE_BYTES_MAX];
    size_t used = 0;
    bool ok = true;
    for (; s < next && ok; s++) {
        const struct event_record *rec = ring_at(r, s);
        if (rec == NULL) {
            continue;
        }
        if (sizeof chunk - used < EVENT_LINE_BYTES_MAX) {
            ok = write_all(fd, chunk, used);
            used = 0;
        }
        used += format_line(rec, chunk + used);
        lines++;
    }
    if (!ok || !write_all(fd, chunk, used)) {
        int err = errno != 0 ? errno : EIO;
        close(fd);
        unlink(tmp);
        return err;
    }
    if (close(fd) != 0 || rename(tmp, r->path) != 0) {
        int err = errno;
        unlink(tmp);
        return err;
    }
    if (r->fd >= 0) {
        close(r->fd);
    }
    r->batch_len = 0; /* the ring's records, those lines among them */
    r->fd = open(r->path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (r->fd < 0) {
        return errno;
    }
    const struct event_record *newest =
        next > 1 ? ring_at(r, next - 1) : NULL;
    r->file_repeats = newest != NULL ? newest->repeats : 0;
    r->file_lines = lines;
    return 0;
}

/* Writes what a batch holds; locked. 0 or errno (persisting stopped). */
static int batch_flush(struct event_ring *r)
{
    size_t len = r->batch_len;
    r->batch_len = 0;
    errno = 0;
    if (len > 0 && r->fd >= 0 && !write_all(r->fd, r->batch, len)) {
        return file_failed(r);
    }
    return 0;
}

/* Appends rec's line (to the batch, in one); locked. 0 or errno
 * (persisting stopped). */
static int file_append(struct event_ring *r, const struct event_record *rec)
{
    if (r->batch_depth > 0) { /* outside one the buffer is empty */
        if (sizeof r->batch - r->batch_len < EVENT_LINE_BYTES_MAX) {
            int err = batch_flush(r);
            if (err != 0) {
                return err;
            }
        }
        r->batch_len += format_line(rec, r->batch + r->batch_len);
        r->file_lines++;
        return 0;
    }
    char line[EVENT_LINE_BYTES_MAX];
    errno = 0;
    if (!write_all(r->fd, line, format_line(rec, line))) {
        return file_failed(r);
    }
    r->file_lines++;
    return 0;
}

/* The file's part of a push that made rec, the new newest record, after
 * prev (NULL: none); locked. 0 or errno. */
static int file_push(struct event_ring *r, const struct event_record *prev,
                     const struct event_record *rec)
{
    if (r->fd < 0) {
        return 0;
    }
    if (r->file_lines + 2 >= EVENT_FILE_LINES_MAX) {
        int err = file_rewrite(r); /* rec is in the ring: written too */
        if (err != 0 && r->fd >= 0) {
            close(r->fd);
            r->fd = -1;
        }
        return err;
    }
    int err = 0;
    if (prev != NULL && prev->repeats != r->file_repeats) {
        err = file_append(r, prev); /* the same seq: the reader updates */
    }
    if (err == 0) {
        err = file_append(r, rec);
    }
    r->file_repeats = 0;
    return err;
}

/* --- Pushing ------------------------------------------------------------ */

static struct event_push push(struct event_ring *r, int64_t unix_ms,
                              const char *text, bool routine)
{
    struct event_push res = {0};
    pthread_mutex_lock(&r->lock);
    struct event_record *last =
        r->next_seq > 1 ? ring_at(r, r->next_seq - 1) : NULL;
    if (last != NULL) {
        if (unix_ms - last->unix_ms < EVENT_REPEAT_WINDOW_MS &&
            last->routine == routine &&
            strncmp(last->text, text, EVENT_TEXT_BYTES - 1) == 0) {
            last->repeats++;
            last->last_ms = unix_ms;
            res.collapsed = true;
            pthread_mutex_unlock(&r->lock);
            return res;
        }
        res.ended_repeats = last->repeats;
    }
    struct event_record *rec = ring_slot(r, r->next_seq);
    rec->seq = r->next_seq++;
    rec->unix_ms = unix_ms;
    rec->last_ms = unix_ms;
    rec->repeats = 0;
    rec->routine = routine;
    snprintf(rec->text, sizeof rec->text, "%s", text);
    res.persist_errno = file_push(r, last, rec);
    pthread_mutex_unlock(&r->lock);
    return res;
}

struct event_push event_ring_push(struct event_ring *r, int64_t unix_ms,
                                  const char *text)
{
    return push(r, unix_ms, text, false);
}

struct event_push event_ring_push_routine(struct event_ring *r,
                                          int64_t unix_ms, const char *text)
{
    return push(r, unix_ms, text, true);
}

void event_ring_batch_begin(struct event_ring *r)
{
    pthread_mutex_lock(&r->lock);
    r->batch_depth++;
    pthread_mutex_unlock(&r->lock);
}

void event_ring_batch_flush(struct event_ring *r)
{
    pthread_mutex_lock(&r->lock);
    (void)batch_flush(r); /* a failure stops the writing, as ever */
    pthread_mutex_unlock(&r->lock);
}

int event_ring_batch_end(struct event_ring *r)
{
    pthread_mutex_lock(&r->lock);
    ASSERT(r->batch_depth > 0);
    int err = --r->batch_depth == 0 ? batch_flush(r) : 0;
    pthread_mutex_unlock(&r->lock);
    return err;
}

void event_ring_destroy(struct event_ring *r)
{
    pthread_mutex_lock(&r->lock);
    r->batch_depth = 0;
    (void)batch_flush(r);
    if (r->fd >= 0) {
        const struct event_record *newest =
            r->next_seq > 1 ? ring_at(r, r->next_seq - 1) : NULL;
        if (newest != NULL && newest->repeats != r->file_repeats) {
            (void)file_append(r, newest); /* closing: nobody to tell */
        }
        if (r->fd >= 0) {
            close(r->fd);
        }
        r->fd = -1;
    }
    pthread_mutex_unlock(&r->lock);
    pthread_mutex_destroy(&r->lock);
}

/* --- Reading the text form ---------------------------------------------- */

/* A decimal number of 1 to 19 digits at *p; advances *p past it. */
static bool parse_u63(const char **p, const char *end, uint64_t *out)
{
    const char *c = *p;
    uint64_t v = 0;
    size_t digits = 0;
    while (c < end && *c >= '0' && *c <= '9' && digits < 19) {
        v = v * 10 + (uint64_t)(*c - '0');
        c++;
        digits++;
    }
    if (digits == 0) {
        return false;
    }
    *out = v;
    *p = c;
    return true;
}

static bool parse_space(const char **p, const char *end)
{
    if (*p >= end || **p != ' ') {
        return false;
    }
    (*p)++;
    return true;
}

bool event_ring_parse_line(const char *line, size_t len,
                           struct event_line *out)
{
    const char *p = line;
    const char *end = line + len;
    uint64_t seq, t, last, rep;
    if (!parse_u63(&p, end, &seq) || !parse_space(&p, end) ||
        !parse_u63(&p, end, &t) || !parse_space(&p, end) ||
        !parse_u63(&p, end, &last) || !parse_space(&p, end) ||
        !parse_u63(&p, end, &rep)) {
        return false;
    }
    bool routine = p < end && *p == 'r';
    p += routine;
    if (!parse_space(&p, end) || seq == 0 || last < t || rep > UINT32_MAX ||
        (size_t)(end - p) >= EVENT_TEXT_BYTES) {
        return false;
    }
    for (const char *c = p; c < end; c++) {
        unsigned char u = (unsigned char)*c;
        if (u < 0x20 || u == 0x7f) {
            return false;
        }
    }
    *out = (struct event_line){seq,           (int64_t)t, (int64_t)last,
                               (uint32_t)rep, routine,    p};
    return true;
}

/* --- Loading the file --------------------------------------------------- */

/* Takes one parsed line into the ring (empty of later records); false if
 * it goes back in sequence. */
static bool load_line(struct event_ring *r, const struct event_line *l)
{
    uint64_t newest = r->next_seq - 1;
    if (l->seq < newest || (l->seq == newest && newest == 0)) {
        return false;
    }
    if (l->seq > newest) {
        r->next_seq = l->seq + 1;
    }
    struct event_record *rec = ring_slot(r, l->seq);
    rec->seq = l->seq;
    rec->unix_ms = l->time_ms;
    rec->last_ms = l->last_ms;
    rec->repeats = l->repeats;
    rec->routine = l->routine;
    size_t n = strlen(l->text);
    memcpy(rec->text, l->text, n + 1);
    return true;
}

/* The last EVENT_FILE_BYTES_MAX bytes of fd into a malloc'd, NUL-ended
 * buffer; a first line cut by that is dropped. 0 or errno. */
static int read_tail(int fd, char **buf_out, size_t *len_out)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        return errno;
    }
    size_t size = st.st_size > 0 ? (size_t)st.st_size : 0;
    size_t want = size < EVENT_FILE_BYTES_MAX ? size : EVENT_FILE_BYTES_MAX;
    char *buf = malloc(want + 1);
    if (buf == NULL) {
        return ENOMEM;
    }
    size_t got = 0;
    while (got < want) {
        ssize_t n =
            pread(fd, buf + got, want - got, (off_t)(size - want + got));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break; /* shrank meanwhile, or an error: what was read */
        }
        got += (size_t)n;
    }
    buf[got] = '\0';
    size_t skip = 0;
    if (want < size) {
        char *nl = memchr(buf, '\n', got);
        skip = nl != NULL ? (size_t)(nl - buf) + 1 : got;
    }
    memmove(buf, buf + skip, got - skip + 1);
    *buf_out = buf;
    *len_out = got - skip;
    return 0;
}

static void load_lines(struct event_ring *r, const char *buf, size_t len,
                       struct event_load *out)
{
    for (const char *p = buf; p < buf + len;) {
        const char *nl = memchr(p, '\n', (size_t)(buf + len - p));
        if (nl == NULL) {
            out->skipped++; /* a last line cut short by a crash */
            break;
        }
        struct event_line l;
        if (event_ring_parse_line(p, (size_t)(nl - p), &l)) {
            char text[EVENT_TEXT_BYTES];
            size_t n = (size_t)(nl - l.text);
            memcpy(text, l.text, n);
            text[n] = '\0';
            l.text = text;
            if (load_line(r, &l)) {
                out->loaded++;
            } else {
                out->skipped++;
            }
        } else {
            out->skipped++;
        }
        p = nl + 1;
    }
}

int event_ring_persist(struct event_ring *r, const char *path,
                       struct event_load *out)
{
    *out = (struct event_load){0};
    if (strlen(path) >= sizeof r->path) {
        return RC_TOO_LARGE;
    }
    pthread_mutex_lock(&r->lock);
    ASSERT(r->next_seq == 1 && r->fd < 0);
    snprintf(r->path, sizeof r->path, "%s", path);
    int err = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char *buf = NULL;
        size_t len = 0;
        err = read_tail(fd, &buf, &len);
        close(fd);
        if (err == 0) {
            load_lines(r, buf, len, out);
        }
        free(buf);
    } else if (errno != ENOENT) {
        err = errno;
    }
    if (err == 0) {
        err = file_rewrite(r);
    }
    pthread_mutex_unlock(&r->lock);
    out->error = err;
    return err == 0 ? RC_OK : RC_IO;
}

/* --- Serving ------------------------------------------------------------ */

/* The first seq to give a reader that saw up to since; call locked. */
static uint64_t ring_first(const struct event_ring *r, uint64_t since)
{
    uint64_t next = r->next_seq;
    uint64_t oldest = next > EVENT_RING_CAP ? next - EVENT_RING_CAP : 1;
    uint64_t from = since >= next ? next : since + 1;
    return from < oldest ? oldest : from;
}

size_t event_ring_text(struct event_ring *r, uint64_t since, FILE *out)
{
    pthread_mutex_lock(&r->lock);
    uint64_t next = r->next_seq;
    fprintf(out, "next %" PRIu64 "\n", next);
    size_t n = 0;
    for (uint64_t s = ring_first(r, since); s < next; s++) {
        const struct event_record *rec = ring_at(r, s);
        if (rec == NULL) {
            continue; /* a gap left by a damaged file */
        }
        char line[EVENT_LINE_BYTES_MAX];
        fwrite(line, 1, format_line(rec, line), out);
        n++;
    }
    pthread_mutex_unlock(&r->lock);
    return n;
}

static void record_json(struct json *j, const struct event_record *rec)
{
    json_object_begin(j);
    json_key(j, "seq");
    json_int(j, (int64_t)rec->seq);
    json_key(j, "time_ms");
    json_int(j, rec->unix_ms);
    json_key(j, "last_ms");
    json_int(j, rec->last_ms);
    json_key(j, "repeats");
    json_int(j, rec->repeats);
    if (rec->routine) {
        json_key(j, "routine");
        json_bool(j, true);
    }
    json_key(j, "text");
    json_string(j, rec->text);
    json_object_end(j);
}

size_t event_ring_json(struct event_ring *r, const char *source,
                       uint64_t since, FILE *out)
{
    struct json j;
    json_init(&j, out);
    json_object_begin(&j);
    json_key(&j, "source");
    json_string(&j, source);
    pthread_mutex_lock(&r->lock);
    uint64_t next = r->next_seq;
    json_key(&j, "next");
    json_int(&j, (int64_t)next);
    json_key(&j, "events");
    json_array_begin(&j);
    size_t n = 0;
    for (uint64_t s = ring_first(r, since); s < next; s++) {
        const struct event_record *rec = ring_at(r, s);
        if (rec != NULL) {
            record_json(&j, rec);
            n++;
        }
    }
    pthread_mutex_unlock(&r->lock);
    json_array_end(&j);
    json_object_end(&j);
    json_finish(&j);
    return n;
}
