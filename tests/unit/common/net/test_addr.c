/* Config address parsing (common/net/addr.h). */
#include <criterion/criterion.h>
#include <string.h>

#include "common/net/addr.h"
#include "common/rc.h"

Test(addr, parses_host_and_port)
{
    struct addr a;
    cr_assert_eq(addr_parse("127.0.0.1:9092", 14, &a), RC_OK);
    cr_assert_str_eq(a.host, "127.0.0.1");
    cr_assert_eq(a.port, 9092);
    char buf[64];
    addr_format(&a, buf, sizeof buf);
    cr_assert_str_eq(buf, "127.0.0.1:9092");
}

Test(addr, rejects_bad_ports_and_shapes)
{
    struct addr a;
    const char *bad[] = {"host", ":9092", "host:", "host:0", "host:65536",
                         "host:12a", "host:123456"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(addr_parse(bad[i], strlen(bad[i]), &a), RC_INVALID,
                     "%s", bad[i]);
    }
}

Test(addr, listener_takes_the_first_entry)
{
    struct addr a;
    cr_assert_eq(addr_parse_listener("PLAINTEXT://localhost:19092,X://h:1",
                                     &a), RC_OK);
    cr_assert_str_eq(a.host, "localhost");
    cr_assert_eq(a.port, 19092);
}

Test(addr, voters_parse_and_reject_duplicates)
{
    struct addr_voter v[CONTROLLER_VOTERS_MAX];
    size_t n = 0;
    cr_assert_eq(addr_parse_voters("101@127.0.0.1:1, 102@h2:2,103@h3:3", v,
                                   CONTROLLER_VOTERS_MAX, &n), RC_OK);
    cr_assert_eq(n, 3);
    cr_assert_eq(v[1].id, 102);
    cr_assert_str_eq(v[1].addr.host, "h2");
    cr_assert_eq(v[2].addr.port, 3);
    cr_assert_eq(addr_parse_voters("1@h:1,1@h:2", v, 9, &n), RC_INVALID);
    cr_assert_eq(addr_parse_voters("", v, 9, &n), RC_INVALID);
    cr_assert_eq(addr_parse_voters("x@h:1", v, 9, &n), RC_INVALID);
    cr_assert_eq(addr_parse_voters("0@h:1", v, 9, &n), RC_INVALID);
    cr_assert_eq(addr_parse_voters("1@h:1,2@h:2", v, 1, &n), RC_TOO_LARGE);
}
