/* State changes as a learner reads them: one line per metadata record,
 * before -> after, e.g. "demo-0 leader 1 -> 2 epoch 3 -> 4, isr 1,2,3 ->
 * 2,3" or "broker 1 fenced". Pure: no I/O, no clock. The caller adds the
 * cause it knows ("(broker 1 fenced: session expired after 3000 ms)"). */
#ifndef CAIRN_COMMON_META_META_EVENT_H
#define CAIRN_COMMON_META_META_EVENT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/meta/meta.h"

/* "1,2,3" ("-" for an empty set) into out (always terminated when cap >
 * 0, cut short if it does not fit). */
void meta_replica_set_format(const struct meta_replica_set *s, char *out,
                             size_t cap);

/* What rec changes in img, which it is about to be applied to: partition
 * leader, leader epoch and ISR changes, brokers registered, fenced,
 * unfenced and shutting down, topics created and deleted. False (out
 * empty) for records that change nothing a learner follows (configs,
 * producer ids, a partition change that only bumps the partition
 * epoch). */
bool meta_record_event(const struct meta_image *img,
                       const struct meta_record *rec, char *out, size_t cap);

#endif
