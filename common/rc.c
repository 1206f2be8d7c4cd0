/* Text for the error enum (common/rc.h). Pure, any thread. */
#include "common/rc.h"

static const char *const rc_texts[RC__COUNT] = {
    [RC_OK] = "ok",
#define X(code, text) [code] = text,
    RC_MAP(X)
#undef X
};

const char *rc_str(int rc)
{
    if (rc < 0 || rc >= RC__COUNT) {
        return "unknown error code";
    }
    return rc_texts[rc];
}
