/* Tests for common/meta/meta_index.c: lookups, replacement, removal that
 * keeps every other key findable (checked against a plain array over a
 * random sequence of puts and removes), and name keys. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "common/meta/meta.h"
#include "common/meta/meta_index.h"
#include "common/rc.h"

static struct meta_uuid id_of(uint32_t n)
{
    struct meta_uuid u;
    memset(&u, 0, sizeof u);
    u.b[0] = 0xab; /* ids alike but for a few bytes, as in tests */
    memcpy(u.b + 12, &n, sizeof n);
    return u;
}

static int values[64];

Test(meta_index, finds_what_was_put_and_nothing_else)
{
    struct meta_index x;
    meta_index_init(&x);
    struct meta_uuid a = id_of(1);
    struct meta_uuid b = id_of(2);
    cr_assert_null(meta_index_get(&x, &a, 0), "empty");
    cr_assert_eq(meta_index_put(&x, &a, 0, &values[0]), RC_OK);
    cr_assert_eq(meta_index_put(&x, &a, 1, &values[1]), RC_OK);
    cr_assert_eq(meta_index_put(&x, &b, 0, &values[2]), RC_OK);
    cr_assert_eq(meta_index_put(&x, &a, META_INDEX_TOPIC, &values[3]), RC_OK);
    cr_assert_eq(x.n, 4);
    cr_assert_eq(meta_index_get(&x, &a, 0), &values[0]);
    cr_assert_eq(meta_index_get(&x, &a, 1), &values[1]);
    cr_assert_eq(meta_index_get(&x, &b, 0), &values[2]);
    cr_assert_eq(meta_index_get(&x, &a, META_INDEX_TOPIC), &values[3]);
    cr_assert_null(meta_index_get(&x, &b, 1));
    cr_assert_eq(meta_index_put(&x, &a, 0, &values[4]), RC_OK);
    cr_assert_eq(x.n, 4, "a put of a known key replaces");
    cr_assert_eq(meta_index_get(&x, &a, 0), &values[4]);
    cr_assert(meta_index_remove(&x, &a, 0));
    cr_assert_not(meta_index_remove(&x, &a, 0), "gone already");
    cr_assert_null(meta_index_get(&x, &a, 0));
    cr_assert_eq(meta_index_get(&x, &a, 1), &values[1]);
    meta_index_clear(&x);
    cr_assert_eq(x.n, 0);
    cr_assert_null(meta_index_get(&x, &b, 0));
    meta_index_free(&x);
}

/* Many keys, removed in a random order among puts: every key still there
 * is found, every removed one is not (backward shift keeps probe runs
 * whole across the wrap of the table). */
Test(meta_index, removal_keeps_the_other_keys_findable)
{
    enum { KEYS = 5000 };
    static bool present[KEYS];
    memset(present, 0, sizeof present);
    struct meta_index x;
    meta_index_init(&x);
    uint64_t rng = 0x1234567;
    size_t n = 0;
    for (int step = 0; step < 60000; step++) {
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        uint32_t k = (uint32_t)(rng >> 33) % KEYS;
        struct meta_uuid id = id_of(k / 7);
        int32_t part = (int32_t)(k % 7);
        if (present[k]) {
            cr_assert(meta_index_remove(&x, &id, part));
            present[k] = false;
            n--;
        } else {
            cr_assert_eq(meta_index_put(&x, &id, part, &values[k % 64]),
                         RC_OK);
            present[k] = true;
            n++;
        }
        cr_assert_eq(x.n, n);
    }
    cr_assert_leq(x.n * 4, x.cap * 3, "load at most 3/4");
    for (uint32_t k = 0; k < KEYS; k++) {
        struct meta_uuid id = id_of(k / 7);
        void *v = meta_index_get(&x, &id, (int32_t)(k % 7));
        if (present[k]) {
            cr_assert_eq(v, &values[k % 64], "key %u", k);
        } else {
            cr_assert_null(v, "key %u was removed", k);
        }
    }
    meta_index_free(&x);
}

Test(meta_index, name_keys_differ_for_different_names)
{
    struct meta_uuid a = meta_index_name_key("orders");
    struct meta_uuid a2 = meta_index_name_key("orders");
    struct meta_uuid b = meta_index_name_key("orderS");
    struct meta_uuid c = meta_index_name_key("");
    cr_assert(meta_uuid_eq(&a, &a2));
    cr_assert_not(meta_uuid_eq(&a, &b));
    cr_assert_not(meta_uuid_eq(&a, &c));
}
