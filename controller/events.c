/* The state changes a proposal makes, as a learner reads them: one line
 * per change, before -> after, with the rule that caused it, e.g.
 *
 *   event: demo-0 leader 1 -> 2 epoch 3 -> 4, isr 1,2,3 -> 2,3 (broker 1
 *   fenced: session expired after 3000 ms; rule: first live ISR member
 *   of replicas 2,3,1, chose 2)
 *
 * The rule is the planner's (controller/plan.h: plan_records.rules), for
 * a record that moves a leader.
 *
 * Described against the committed image before the proposal (the
 * controller has one proposal in flight at a time), logged once it
 * commits. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/meta/meta.h"
#include "common/trace.h"
#include "controller/controller_internal.h"

#define EVENT_LINE_MAX 400

/* The rule that caused op's changes: an internal duty's, or its
 * request's (described by controller/handlers.c, which reads the
 * protobuf). */
static void op_cause(const struct controller *c, const struct ctl_op *op,
                     char *out, size_t cap)
{
    if (op->fence) {
        snprintf(out, cap, "broker %d fenced: session expired after %lld "
                 "ms", (int)op->fence_broker,
                 (long long)c->cfg.session_timeout_ms);
        return;
    }
    if (op->rebalance) {
        snprintf(out, cap, "preferred leader restored: leader imbalance "
                 "above leader.imbalance.per.broker.percentage=%d",
                 (int)c->cfg.leader_imbalance_percentage);
        return;
    }
    if (op->elect_leaderless || op->req == NULL) {
        snprintf(out, cap, "electing leaders where there are none");
        return;
    }
    handlers_request_cause(op, out, cap);
}

char *controller_events(const struct controller *c, const struct ctl_op *op,
                        const struct plan_records *recs)
{
    char cause[200];
    op_cause(c, op, cause, sizeof cause);
    char *text = NULL;
    size_t len = 0;
    for (size_t i = 0; i < recs->n; i++) {
        char line[EVENT_LINE_MAX];
        if (!meta_record_event(&c->fsm.image, &recs->recs[i], line,
                               sizeof line)) {
            continue;
        }
        const char *rule = recs->rules != NULL ? recs->rules[i] : "";
        /* "broker 1 fenced (session expired ...)", not "broker 1 fenced
         * (broker 1 fenced: session expired ...)"; no cause that the line
         * already says ("broker 1 registered"). */
        const char *why = cause;
        size_t ll = strlen(line);
        size_t cl = strlen(cause);
        if (strncmp(cause, line, ll) == 0 && cause[ll] == ':') {
            why = cause + ll + 2;
        } else if (strncmp(line, cause, cl) == 0) {
            why = "";
        }
        /* "(cause; rule: ...)", "(cause)", "(rule: ...)" or nothing */
        const char *sep = *why != '\0' && *rule != '\0' ? "; " : "";
        bool paren = *why != '\0' || *rule != '\0';
        size_t add = ll + strlen(why) + strlen(rule) + 7; /* " (; )\n" */
        char *grown = realloc(text, len + add);
        if (grown == NULL) {
            break; /* events are for people; the proposal goes on */
        }
        text = grown;
        len += (size_t)snprintf(text + len, add, "%s%s%s%s%s%s\n", line,
                                paren ? " (" : "", why, sep, rule,
                                paren ? ")" : "");
    }
    return text;
}

void controller_events_log(struct controller *c, const char *events)
{
    trace_batch_begin(); /* a fence of 100,000 ISRs: 100,000 lines */
    for (const char *p = events; p != NULL && *p != '\0';) {
        const char *nl = strchr(p, '\n');
        int n = (int)(nl != NULL ? nl - p : (ptrdiff_t)strlen(p));
        /* The internal topic's own creation is housekeeping too; its
         * partitions' lines are so by their name (common/trace.h). */
        bool routine = strncmp(p, "topic __", 8) == 0;
        TRACE_INFO(c->tracer, "%s%.*s",
                   routine ? TRACE_ROUTINE_EVENT_PREFIX : TRACE_EVENT_PREFIX,
                   n, p);
        p = nl != NULL ? nl + 1 : p + n;
    }
    trace_batch_end();
}
