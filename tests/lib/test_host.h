/* Test helper: a partition host (broker/replication/partition.h) with a
 * clock the test moves by hand, and a record of what the partitions told
 * it: how many wakes and calls for an ISR check, each ISR they proposed
 * to the controller, their asks to leave the ISR, and their event
 * lines. */
#ifndef CAIRN_TESTS_TEST_HOST_H
#define CAIRN_TESTS_TEST_HOST_H

#include <stdint.h>

#include "broker/replication/partition.h"
#include "common/trace.h"

#define TEST_HOST_WALL_BASE_MS 1700000000000LL

struct test_host {
    struct partition_host host;
    int64_t now_ms;            /* the monotonic clock; wall = base + now */
    int wakes;
    int isr_works;             /* calls of the isr_work hook */
    int follower_damages;      /* calls of the follower_damaged hook */
    int alters;                /* AlterPartition proposals */
    struct meta_replica_set proposed; /* the last one */
    const struct partition *last; /* the partition that proposed it */
    int leaves;                /* asks to leave the ISR (LeaveLeadership) */
    int64_t leave_offset;      /* the last one's corrupt offset */
    struct tracer tracer;
    int events;                /* "event: " lines */
    char last_event[1024];
    char event_text[8192];     /* every event line, each ending "\n" */
};

void test_host_init(struct test_host *h, int32_t self);

#endif
