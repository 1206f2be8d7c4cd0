/* Dynamic broker configs in the metadata image (common/meta/meta.h):
 * ConfigRecords of resource type 4 applied per resource ("" the cluster
 * default, "N" broker N), deleted, copied, and carried by the image's
 * encoding (common/meta/meta_codec.h). */
#include "common/meta/meta.h"
#include "common/meta/meta_codec.h"
#include "common/rc.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct meta_record broker_config(const char *resource,
                                        const char *name, const char *value)
{
    struct meta_record r;
    memset(&r, 0, sizeof r);
    r.type = META_REC_CONFIG;
    r.u.config.resource_type = META_RESOURCE_BROKER;
    snprintf(r.u.config.resource_name, sizeof r.u.config.resource_name, "%s",
             resource);
    snprintf(r.u.config.name, sizeof r.u.config.name, "%s", name);
    r.u.config.has_value = value != NULL;
    if (value != NULL) {
        snprintf(r.u.config.value, sizeof r.u.config.value, "%s", value);
    }
    return r;
}

static void apply_ok(struct meta_image *img, const char *resource,
                     const char *name, const char *value)
{
    struct meta_record r = broker_config(resource, name, value);
    cr_assert_eq(meta_apply(img, &r), RC_OK, "%s %s", resource, name);
}

Test(meta_broker_configs, default_and_per_broker_sets_are_kept_apart)
{
    struct meta_image img;
    meta_image_init(&img);
    apply_ok(&img, "", "log.retention.ms", "1000");
    apply_ok(&img, "2", "log.retention.ms", "2000");
    apply_ok(&img, "2", "min.insync.replicas", "2");
    cr_assert_eq(img.offset, 3);
    cr_assert_str_eq(meta_broker_config(&img, META_BROKER_DEFAULT,
                                        "log.retention.ms"),
                     "1000");
    cr_assert_str_eq(meta_broker_config(&img, 2, "log.retention.ms"),
                     "2000");
    cr_assert_null(meta_broker_config(&img, 1, "log.retention.ms"));
    cr_assert_null(
        meta_broker_config(&img, META_BROKER_DEFAULT, "min.insync.replicas"));
    apply_ok(&img, "2", "log.retention.ms", NULL);
    apply_ok(&img, "2", "min.insync.replicas", NULL);
    apply_ok(&img, "7", "never.set", NULL); /* nothing to delete: fine */
    cr_assert_null(meta_broker_config(&img, 2, "log.retention.ms"));
    cr_assert_eq(img.n_broker_configs, 1u, "an emptied set goes");
    meta_image_free(&img);
}

Test(meta_broker_configs, resource_names_are_empty_or_a_plain_id)
{
    int32_t b = 0;
    cr_assert(meta_broker_resource("", &b));
    cr_assert_eq(b, META_BROKER_DEFAULT);
    cr_assert(meta_broker_resource("0", &b));
    cr_assert_eq(b, 0);
    cr_assert(meta_broker_resource("2147483647", &b));
    cr_assert_eq(b, INT32_MAX);
    static const char *const bad[] = {"-1", "01", "2147483648", "1a", " 1",
                                      "99999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert(!meta_broker_resource(bad[i], &b), "%s", bad[i]);
    }
    struct meta_image img;
    meta_image_init(&img);
    struct meta_record r = broker_config("01", "a", "b");
    cr_assert_eq(meta_apply(&img, &r), RC_INVALID);
    cr_assert_eq(img.n_broker_configs, 0u);
    cr_assert_eq(img.offset, 1);
    meta_image_free(&img);
}

Test(meta_broker_configs, copies_and_image_encodings_keep_them)
{
    struct meta_image img;
    meta_image_init(&img);
    apply_ok(&img, "", "log.retention.ms", "1000");
    apply_ok(&img, "3", "log.segment.bytes", "1048576");
    apply_ok(&img, "3", "log.retention.bytes", "-1");
    struct meta_image copy;
    meta_image_init(&copy);
    cr_assert_eq(meta_image_copy(&copy, &img), RC_OK);
    cr_assert_str_eq(meta_broker_config(&copy, 3, "log.segment.bytes"),
                     "1048576");
    uint8_t *bytes = NULL;
    size_t len = 0;
    cr_assert_eq(meta_codec_encode_image(&img, malloc, &bytes, &len), RC_OK);
    struct meta_image back;
    meta_image_init(&back);
    cr_assert_eq(meta_codec_decode_image(bytes, len, &back), RC_OK);
    cr_assert_eq(back.offset, img.offset);
    cr_assert_eq(back.n_broker_configs, 2u);
    cr_assert_str_eq(meta_broker_config(&back, META_BROKER_DEFAULT,
                                        "log.retention.ms"),
                     "1000");
    cr_assert_str_eq(meta_broker_config(&back, 3, "log.retention.bytes"),
                     "-1");
    free(bytes);
    meta_image_free(&back);
    meta_image_free(&copy);
    meta_image_free(&img);
}
