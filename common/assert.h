/* Assertions that stay on in release builds. ASSERT() is for programmer
 * errors only (a broken invariant of our own); a peer's or the disk's
 * mistake is an RC_* code, never an assert. DEBUG_ASSERT() is for checks
 * too slow for release builds. */
#ifndef CAIRN_COMMON_ASSERT_H
#define CAIRN_COMMON_ASSERT_H

#define MUST_CHECK __attribute__((warn_unused_result))
#define NORETURN __attribute__((noreturn))

NORETURN void assert_fail(const char *expr, const char *file, int line);
/* Called by a failing assertion before it prints and aborts, if set: the
 * tracer's batches set it to write what they hold (common/trace.h). */
extern void (*assert_before_abort)(void);

#define ASSERT(expr)                                                   \
    do {                                                               \
        if (__builtin_expect(!(expr), 0)) {                            \
            assert_fail(#expr, __FILE__, __LINE__);                    \
        }                                                              \
    } while (0)

/* A branch our own invariants rule out; why says which. */
#define ASSERT_UNREACHABLE(why) assert_fail((why), __FILE__, __LINE__)

#ifdef NDEBUG
#define DEBUG_ASSERT(expr) ((void)0)
#else
#define DEBUG_ASSERT(expr) ASSERT(expr)
#endif

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif
