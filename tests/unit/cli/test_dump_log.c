/* Unit tests for `cairn dump-log` (cli/cmd/dump_log/): the batch fields of
 * a log the broker's own code wrote, its epoch checkpoint and indexes; a
 * flipped byte (CRC MISMATCH), a cut tail, a bad batch length, a file
 * shorter than a header; compressed batches' records; the log dir's high
 * watermark; corrupt checkpoints; --json. Every damaged case must exit 1
 * and say where. */
#include "cli/cmd/dump_log/dump_log.h"
#include "cli/cmd/dump_log/dump_log_internal.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file.h"
#include "common/kafka/record_batch.h"
#include "common/kafka/record_inflate.h"
#include "common/rc.h"
#include "common/writer.h"
#include "tests/lib/batch_builder.h"
#include "tests/lib/log_fixture.h"
#include "tests/lib/tmpdir.h"

#define TS 1700000000000LL

static char *out_text;
static size_t out_len;

/* Runs dump-log on path with the flags given; the exit code, and the
 * output in out_text (freed by the next call or at exit). */
static int dump(const char *path, bool records, bool json)
{
    free(out_text);
    out_text = NULL;
    FILE *out = open_memstream(&out_text, &out_len);
    cr_assert_not_null(out);
    struct dump_log_opts o = {.n_paths = 1, .records = records,
                              .json = json,
                              .show_bytes = DUMP_LOG_SHOW_BYTES_DEFAULT};
    o.paths[0] = path;
    int rc = dump_log_run(&o, out);
    fclose(out);
    return rc;
}

static void expect(const char *s)
{
    cr_expect_not_null(strstr(out_text, s), "missing \"%s\" in:\n%s", s,
                       out_text);
}

static void expect_not(const char *s)
{
    cr_expect_null(strstr(out_text, s), "unexpected \"%s\" in:\n%s", s,
                   out_text);
}

/* Lines of the output that start with prefix and end with suffix. */
static int count_lines(const char *prefix, const char *suffix)
{
    int n = 0;
    size_t plen = strlen(prefix);
    size_t slen = strlen(suffix);
    for (const char *p = out_text; p != NULL && *p != '\0';) {
        const char *nl = strchr(p, '\n');
        size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        if (len >= plen + slen && strncmp(p, prefix, plen) == 0 &&
            strncmp(p + len - slen, suffix, slen) == 0) {
            n++;
        }
        p = nl != NULL ? nl + 1 : NULL;
    }
    return n;
}

/* --- A log written by the broker's log code -------------------------- */

static struct log_fixture f;

static void fixture_setup(void)
{
    log_fixture_setup(&f);
    log_fixture_open(&f);
}

static void fixture_teardown(void)
{
    if (f.log != NULL) {
        log_fixture_close(&f);
    }
    log_fixture_teardown(&f);
    free(out_text);
    out_text = NULL;
}

/* Appends a built batch of n records at epoch; its size in bytes. */
static size_t append(int32_t n, int32_t epoch, int64_t ts)
{
    struct built_batch b = batch_build(n, 10, ts, (uint32_t)ts);
    size_t len = b.len;
    struct log_append_info info;
    cr_assert_eq(log_append(f.log, b.bytes, b.len, epoch, ts, &info), RC_OK);
    built_batch_free(&b);
    return len;
}

TestSuite(dump_log, .init = fixture_setup, .fini = fixture_teardown);

Test(dump_log, shows_every_batch_field_the_epochs_and_the_indexes)
{
    size_t first = append(3, 0, TS);
    append(2, 4, TS + 10);
    cr_assert_eq(log_fixture_wait_durable(&f, 5), RC_OK);
    log_fixture_close(&f);
    cr_assert_eq(dump(f.dir, false, false), 0, "%s", out_text);
    expect("segments=1\n");
    expect("00000000000000000000.log base_offset=0 bytes=");
    expect("  position=0 base_offset=0 last_offset=2 count=3 leader_epoch=0"
           " magic=2 codec=none timestamp_type=create transactional=false"
           " control=false producer_id=-1 producer_epoch=-1"
           " base_sequence=-1 first_timestamp=1700000000000"
           " max_timestamp=1700000000002 size=");
    char line[160];
    snprintf(line, sizeof line,
             "  position=%zu base_offset=3 last_offset=4 count=2 "
             "leader_epoch=4 ",
             first);
    expect(line);
    expect("first_timestamp=1700000000010 max_timestamp=1700000000011");
    cr_expect_eq(count_lines("  position=", " crc valid"), 2);
    expect("  batches=2 next_offset=5\n");
    expect("leader-epoch-checkpoint:\n  epoch=0 start_offset=0\n"
           "  epoch=4 start_offset=3\n  entries=2 ok\n");
    expect("  00000000000000000000.index: entries=");
    expect("  00000000000000000000.timeindex: entries=");
    expect("producer-state.snapshot:");
    expect_not("MISMATCH");
    expect_not("problems=");
}

Test(dump_log, a_flipped_byte_is_a_crc_mismatch)
{
    size_t first = append(3, 0, TS);
    append(2, 0, TS + 10);
    cr_assert_eq(log_fixture_wait_durable(&f, 5), RC_OK);
    log_fixture_close(&f);
    /* A value byte of the second batch: inside its CRC. */
    cr_assert(log_fixture_flip(&f, 0, (int64_t)first + 70, 0x01));
    cr_assert_eq(dump(f.dir, true, false), 1);
    char line[64];
    snprintf(line, sizeof line, "  position=%zu base_offset=3", first);
    expect(line);
    expect(" CRC MISMATCH\n    (records not shown: the CRC does not "
           "match)\n");
    expect("    | offset=0 timestamp=1700000000000"); /* first batch ok */
    expect("  batches=2 records=3 next_offset=5\n");
    expect("problems=1\n");
}

/* --- Segments and checkpoints written byte by byte -------------------- */

static char root[4096]; /* a log dir */
static char part[4200]; /* root/orders-0, a partition dir */
static char seg[4300];  /* part/00000000000000000000.log */

static void files_setup(void)
{
    tmpdir_make(root, sizeof root);
    snprintf(part, sizeof part, "%s/orders-0", root);
    cr_assert_eq(mkdir(part, 0755), 0);
    snprintf(seg, sizeof seg, "%s/00000000000000000000.log", part);
}

static void files_teardown(void)
{
    tmpdir_remove(root);
    free(out_text);
    out_text = NULL;
}

TestSuite(dump_log_files, .init = files_setup, .fini = files_teardown);

/* Writes len bytes to path, replacing it. */
static void write_file(const char *path, const void *p, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, p, len), (ssize_t)len);
    close(fd);
}

/* Three records with keys "k<i>" and values "value-<i>" at offsets
 * base..base+2, leader epoch epoch, in codec. */
static struct built_batch keyed(int codec, int64_t base, int32_t epoch)
{
    struct writer w;
    writer_init(&w, 1 << 20);
    for (int32_t i = 0; i < 3; i++) {
        char key[8], value[16];
        int kl = snprintf(key, sizeof key, "k%d", i);
        int vl = snprintf(value, sizeof value, "value-%d", i);
        struct batch_record r = {.offset_delta = i, .timestamp_delta = i,
                                 .key = key, .key_len = kl,
                                 .value = value, .value_len = vl};
        batch_write_record(&w, &r);
    }
    struct batch_spec spec = {.codec = codec, .record_count = 3,
                              .base_timestamp = TS, .max_timestamp = TS + 2,
                              .producer_id = 42, .base_sequence = 7};
    struct built_batch b = batch_wrap(w.data, w.len, &spec);
    writer_free(&w);
    record_batch_set_base_offset(b.bytes, base);
    record_batch_set_leader_epoch(b.bytes, epoch);
    return b;
}

/* Two keyed batches back to back in seg: gzip at 0, zstd at 3. */
static size_t write_two(uint8_t **bytes)
{
    struct built_batch a = keyed(RECORD_CODEC_GZIP, 0, 1);
    struct built_batch b = keyed(RECORD_CODEC_ZSTD, 3, 2);
    size_t len = a.len + b.len;
    *bytes = malloc(len);
    memcpy(*bytes, a.bytes, a.len);
    memcpy(*bytes + a.len, b.bytes, b.len);
    write_file(seg, *bytes, len);
    built_batch_free(&a);
    built_batch_free(&b);
    return len;
}

Test(dump_log_files, compressed_batches_show_their_records)
{
    uint8_t *bytes = NULL;
    write_two(&bytes);
    free(bytes);
    cr_assert_eq(dump(seg, true, false), 0, "%s", out_text);
    expect("  position=0 base_offset=0 last_offset=2 count=3 leader_epoch=1"
           " magic=2 codec=gzip");
    expect("producer_id=42 producer_epoch=0 base_sequence=7");
    expect("base_offset=3 last_offset=5 count=3 leader_epoch=2 magic=2 "
           "codec=zstd");
    expect("    | offset=0 timestamp=1700000000000 key_size=2 value_size=7"
           " key=\"k0\" value=\"value-0\"\n");
    expect("    | offset=5 timestamp=1700000000002 key_size=2 value_size=7"
           " key=\"k2\" value=\"value-2\"\n");
    expect("  batches=2 records=6 next_offset=6\n");
    cr_expect_eq(count_lines("  position=", " crc valid"), 2);
}

Test(dump_log_files, a_cut_tail_is_reported_at_its_position)
{
    uint8_t *bytes = NULL;
    size_t len = write_two(&bytes);
    struct record_batch_header h;
    cr_assert_eq(record_batch_parse(bytes, len, &h), RC_OK);
    size_t first = (size_t)record_batch_size(&h);
    write_file(seg, bytes, len - 5);
    free(bytes);
    cr_assert_eq(dump(seg, false, false), 1);
    char line[128];
    snprintf(line, sizeof line,
             "  position=%zu TRUNCATED: a batch of %zu bytes, %zu bytes "
             "left\n",
             first, len - first, len - first - 5);
    expect(line);
    expect("  batches=1 next_offset=3\n");

    /* Less than a header left. */
    write_file(seg, (const uint8_t *)"\0\0\0\0\0\0\0\0\0\0", 10);
    cr_assert_eq(dump(seg, false, false), 1);
    expect("  position=0 TRUNCATED: 10 bytes left, less than a batch "
           "header (61)\n");
    expect("  batches=0 next_offset=-1\n");
}

Test(dump_log_files, a_bad_length_or_magic_ends_the_walk)
{
    uint8_t *bytes = NULL;
    size_t len = write_two(&bytes);
    struct record_batch_header h;
    cr_assert_eq(record_batch_parse(bytes, len, &h), RC_OK);
    size_t first = (size_t)record_batch_size(&h);
    uint8_t *second = bytes + first;
    memcpy(second + 8, "\x7f\xff\xff\xff", 4); /* batchLength INT32_MAX */
    write_file(seg, bytes, len);
    cr_assert_eq(dump(seg, true, false), 1);
    char line[128];
    snprintf(line, sizeof line,
             "  position=%zu BAD LENGTH: batchLength 2147483647 is outside",
             first);
    expect(line);
    memcpy(second + 8, "\xff\xff\xff\xfb", 4); /* -5 */
    write_file(seg, bytes, len);
    cr_assert_eq(dump(seg, false, false), 1);
    expect("BAD LENGTH: batchLength -5 is outside");
    memcpy(second + 8, bytes + 8, 4);
    second[16] = 1; /* magic */
    write_file(seg, bytes, len);
    cr_assert_eq(dump(seg, false, false), 1);
    expect("BAD MAGIC: magic 1, expected 2");
    expect("  batches=1 next_offset=3\n");
    free(bytes);
}

Test(dump_log_files, checkpoints_of_the_partition_and_its_log_dir)
{
    uint8_t *bytes = NULL;
    write_two(&bytes);
    free(bytes);
    const char *epochs = "0\n2\n1 0\n2 3\n";
    cr_assert_eq(file_write_checked(part, "leader-epoch-checkpoint", epochs,
                                    strlen(epochs)),
                 RC_OK);
    const char *hws = "0\n2\norders 1 9\norders 0 6\n";
    cr_assert_eq(file_write_checked(root, "replication-offset-checkpoint",
                                    hws, strlen(hws)),
                 RC_OK);
    cr_assert_eq(dump(part, false, false), 0, "%s", out_text);
    expect("partition ");
    expect("/orders-0 topic=orders partition=0 segments=1\n");
    expect("leader-epoch-checkpoint:\n  epoch=1 start_offset=0\n"
           "  epoch=2 start_offset=3\n  entries=2 ok\n");
    expect("high watermark (../replication-offset-checkpoint, orders 0): "
           "6\n");
    expect("producer-state.snapshot:\n  missing\n");
    expect("  00000000000000000000.index: missing\n");
}

Test(dump_log_files, corrupt_checkpoints_are_named_not_trusted)
{
    uint8_t *bytes = NULL;
    write_two(&bytes);
    free(bytes);
    char path[4400];
    snprintf(path, sizeof path, "%s/leader-epoch-checkpoint", part);
    const char *flipped = "0\n1\n1 0\ncrc32c 00000000\n";
    write_file(path, flipped, strlen(flipped));
    const char *unordered = "0\n2\n2 0\n1 3\n";
    snprintf(path, sizeof path, "%s/producer-state.snapshot", part);
    write_file(path, "CPS1 garbage", 12);
    const char *short_count = "0\n5\norders 0 6\n";
    cr_assert_eq(file_write_checked(root, "replication-offset-checkpoint",
                                    short_count, strlen(short_count)),
                 RC_OK);
    cr_assert_eq(dump(part, false, false), 1);
    expect("leader-epoch-checkpoint:\n  entries=0 CORRUPT\n");
    expect("high watermark (../replication-offset-checkpoint, orders 0): "
           "CORRUPT\n");
    expect("producer-state.snapshot:\n  CORRUPT\n");
    expect("problems=3\n");
    cr_assert_eq(file_write_checked(part, "leader-epoch-checkpoint",
                                    unordered, strlen(unordered)),
                 RC_OK);
    cr_assert_eq(dump(part, false, false), 1);
    /* The entries before the fault are shown, the file is named. */
    expect("leader-epoch-checkpoint:\n  epoch=2 start_offset=0\n"
           "  entries=1 CORRUPT\n");
}

Test(dump_log_files, json_is_one_document_with_the_same_fields)
{
    uint8_t *bytes = NULL;
    size_t len = write_two(&bytes);
    bytes[len - 1] ^= 0x01; /* the second batch's CRC fails */
    write_file(seg, bytes, len);
    free(bytes);
    cr_assert_eq(dump(part, true, true), 1);
    expect("{\"paths\":[{\"path\":\"");
    expect("\"kind\":\"partition\",\"topic\":\"orders\",\"partition\":0,"
           "\"segments\":[{\"file\":\"");
    expect("\"position\":0,\"base_offset\":0,\"last_offset\":2,\"count\":3,"
           "\"leader_epoch\":1,\"magic\":2,");
    expect("\"codec\":\"gzip\"");
    expect("\"crc_valid\":true");
    expect("\"crc_valid\":false");
    expect("\"records\":[{\"offset\":0,\"timestamp\":1700000000000,"
           "\"key\":\"k0\",\"value\":\"value-0\"}");
    expect("\"tail\":null,\"next_offset\":6");
    expect("\"leader_epoch_checkpoint\":{\"entries\":[],\"status\":"
           "\"missing\"}");
    expect("\"problems\":1}\n");
    cr_expect_eq(strchr(out_text, '\n'), out_text + out_len - 1);
}

Test(dump_log_files, keys_and_values_are_printable_and_cut)
{
    char out[16];
    dump_log_printable((const uint8_t *)"a\x01\"b", 4, 8, out, sizeof out);
    cr_expect_str_eq(out, "a..b");
    dump_log_printable((const uint8_t *)"abcdefghij", 10, 4, out,
                       sizeof out);
    cr_expect_str_eq(out, "abcd...");
}

Test(dump_log_files, a_missing_path_fails_and_says_why)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/nope-0", root);
    cr_assert_eq(dump(path, false, false), 1);
    expect("nope-0: CANNOT READ: No such file or directory\n");
}
