/* Tests for broker/replication/hw_checkpoint.c: a good checkpoint gives
 * each partition its HW; a flipped, cut or garbage one, or one whose
 * count is off, is not trusted, nor any value in it; the older format
 * without a checksum line is still read; the cache answers as the file
 * does from one read. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "broker/replication/hw_checkpoint.h"
#include "common/file.h"
#include "common/io.h"
#include "common/rc.h"
#include "tests/lib/tmpdir.h"

static char dir[4096];

static void setup(void)
{
    io_fault_clear();
    tmpdir_make(dir, sizeof dir);
}

static void teardown(void)
{
    io_fault_clear();
    tmpdir_remove(dir);
}

TestSuite(hw_checkpoint, .init = setup, .fini = teardown);

#define TEXT "0\n3\norders 0 120\norders 1 77\nclicks 0 5\n"

static void write_raw(const char *text, size_t n)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, HW_CHECKPOINT_FILE);
    FILE *out = fopen(path, "wb");
    cr_assert_not_null(out);
    cr_assert_eq(fwrite(text, 1, n, out), n);
    fclose(out);
}

Test(hw_checkpoint, good_checkpoint_gives_each_partition_its_hw)
{
    cr_assert_eq(file_write_checked(dir, HW_CHECKPOINT_FILE, TEXT,
                                    strlen(TEXT)), RC_OK);
    int64_t hw = -1;
    cr_assert_eq(hw_checkpoint_read(dir, "orders", 1, &hw), RC_OK);
    cr_assert_eq(hw, 77);
    cr_assert_eq(hw_checkpoint_read(dir, "clicks", 0, &hw), RC_OK);
    cr_assert_eq(hw, 5);
    cr_assert_eq(hw_checkpoint_read(dir, "clicks", 1, &hw), RC_OK);
    cr_assert_eq(hw, 0, "no line: 0");
}

Test(hw_checkpoint, missing_checkpoint_is_not_found)
{
    int64_t hw = -1;
    cr_assert_eq(hw_checkpoint_read(dir, "orders", 0, &hw), RC_NOT_FOUND);
    cr_assert_eq(hw, 0);
}

Test(hw_checkpoint, flipped_cut_or_garbage_checkpoint_is_not_trusted)
{
    cr_assert_eq(file_write_checked(dir, HW_CHECKPOINT_FILE, TEXT,
                                    strlen(TEXT)), RC_OK);
    char good[256];
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, HW_CHECKPOINT_FILE);
    FILE *in = fopen(path, "rb");
    size_t n = fread(good, 1, sizeof good, in);
    fclose(in);
    char bad[256];
    /* "orders 0 120": the 1 becomes 0, a value that still parses. */
    memcpy(bad, good, n);
    bad[13] ^= 1;
    write_raw(bad, n);
    int64_t hw = -1;
    cr_assert_eq(hw_checkpoint_read(dir, "orders", 0, &hw), RC_CORRUPT);
    cr_assert_eq(hw, 0);
    for (size_t cut = 0; cut < n; cut++) {
        if (cut == strlen(TEXT)) {
            continue; /* the whole text, as the older format wrote it */
        }
        write_raw(good, cut);
        cr_assert_neq(hw_checkpoint_read(dir, "orders", 0, &hw), RC_OK,
                      "cut at %zu", cut);
        cr_assert_eq(hw, 0);
    }
    for (size_t k = 0; k < n; k++) {
        bad[k] = (char)(k * 97 + 13);
    }
    write_raw(bad, n);
    cr_assert_eq(hw_checkpoint_read(dir, "orders", 0, &hw), RC_CORRUPT);
    /* Read through the seam: a bit flipped on its way in. */
    write_raw(good, n);
    cr_assert_eq(io_fault_parse("read:flip:path=replication-offset"), RC_OK);
    cr_assert_eq(hw_checkpoint_read(dir, "orders", 0, &hw), RC_CORRUPT);
}

Test(hw_checkpoint, older_format_is_read_if_it_parses)
{
    write_raw(TEXT, strlen(TEXT));
    int64_t hw = -1;
    cr_assert_eq(hw_checkpoint_read(dir, "orders", 0, &hw), RC_OK);
    cr_assert_eq(hw, 120);
    const char *wrong_count = "0\n4\norders 0 120\n";
    write_raw(wrong_count, strlen(wrong_count));
    cr_assert_eq(hw_checkpoint_read(dir, "orders", 0, &hw), RC_CORRUPT);
}

/* The cache answers as the file does, from one read: a rewrite of the
 * file is seen only after a drop (the broker drops it as it writes). */
Test(hw_checkpoint, the_cache_reads_the_file_once_until_dropped)
{
    cr_assert_eq(file_write_checked(dir, HW_CHECKPOINT_FILE, TEXT,
                                    strlen(TEXT)), RC_OK);
    struct hw_checkpoint_cache c;
    memset(&c, 0, sizeof c);
    int64_t hw = -1;
    cr_assert_eq(hw_checkpoint_cache_read(&c, dir, "orders", 0, &hw), RC_OK);
    cr_assert_eq(hw, 120);
    cr_assert_eq(hw_checkpoint_cache_read(&c, dir, "orders", 1, &hw), RC_OK);
    cr_assert_eq(hw, 77);
    cr_assert_eq(hw_checkpoint_cache_read(&c, dir, "clicks", 1, &hw), RC_OK);
    cr_assert_eq(hw, 0, "no line: 0");
    cr_assert_eq(c.n, 3, "three lines read once");
    const char *next = "0\n1\norders 0 130\n";
    cr_assert_eq(file_write_checked(dir, HW_CHECKPOINT_FILE, next,
                                    strlen(next)), RC_OK);
    cr_assert_eq(hw_checkpoint_cache_read(&c, dir, "orders", 0, &hw), RC_OK);
    cr_assert_eq(hw, 120, "what was read, until dropped");
    hw_checkpoint_cache_drop(&c);
    cr_assert_eq(hw_checkpoint_cache_read(&c, dir, "orders", 0, &hw), RC_OK);
    cr_assert_eq(hw, 130);
    cr_assert_eq(hw_checkpoint_cache_read(&c, dir, "orders", 1, &hw), RC_OK);
    cr_assert_eq(hw, 0);
    hw_checkpoint_cache_drop(&c);
}

Test(hw_checkpoint, the_cache_trusts_no_value_of_a_damaged_file)
{
    const char *bad = "0\n3\norders 0 120\norders 1 77\n"; /* count off */
    cr_assert_eq(file_write_checked(dir, HW_CHECKPOINT_FILE, bad,
                                    strlen(bad)), RC_OK);
    struct hw_checkpoint_cache c;
    memset(&c, 0, sizeof c);
    int64_t hw = -1;
    cr_assert_eq(hw_checkpoint_cache_read(&c, dir, "orders", 0, &hw),
                 RC_CORRUPT);
    cr_assert_eq(hw, 0);
    cr_assert_eq(hw_checkpoint_cache_read(&c, dir, "orders", 1, &hw),
                 RC_CORRUPT, "nor any later value");
    cr_assert_eq(hw, 0);
    hw_checkpoint_cache_drop(&c);
    struct hw_checkpoint_cache none;
    memset(&none, 0, sizeof none);
    char empty[4200];
    snprintf(empty, sizeof empty, "%s/none", dir);
    cr_assert_eq(file_mkdirs(empty), RC_OK);
    cr_assert_eq(hw_checkpoint_cache_read(&none, empty, "orders", 0, &hw),
                 RC_NOT_FOUND);
    hw_checkpoint_cache_drop(&none);
}
