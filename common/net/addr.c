/* Config address parsing (common/net/addr.h). */
#include "common/net/addr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rc.h"

int addr_parse(const char *s, size_t len, struct addr *out)
{
    const char *colon = NULL;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ':') {
            colon = s + i;
        }
    }
    if (colon == NULL || colon == s) {
        return RC_INVALID;
    }
    size_t host_len = (size_t)(colon - s);
    size_t port_len = len - host_len - 1;
    if (host_len > META_HOST_BYTES_MAX || port_len == 0 || port_len > 5) {
        return RC_INVALID;
    }
    int port = 0;
    for (size_t i = 0; i < port_len; i++) {
        char c = colon[1 + i];
        if (c < '0' || c > '9') {
            return RC_INVALID;
        }
        port = port * 10 + (c - '0');
    }
    if (port <= 0 || port > 65535) {
        return RC_INVALID;
    }
    memcpy(out->host, s, host_len);
    out->host[host_len] = '\0';
    out->port = port;
    return RC_OK;
}

int addr_parse_listener(const char *s, struct addr *out)
{
    const char *sep = strstr(s, "://");
    const char *start = sep == NULL ? s : sep + 3;
    size_t len = strcspn(start, ",");
    return addr_parse(start, len, out);
}

static int parse_voter(const char *s, size_t len, struct addr_voter *v)
{
    const char *at = memchr(s, '@', len);
    if (at == NULL || at == s || (size_t)(at - s) > 9) {
        return RC_INVALID;
    }
    int32_t id = 0;
    for (const char *p = s; p < at; p++) {
        if (*p < '0' || *p > '9') {
            return RC_INVALID;
        }
        id = id * 10 + (*p - '0');
    }
    if (id <= 0) {
        return RC_INVALID;
    }
    v->id = id;
    return addr_parse(at + 1, len - (size_t)(at + 1 - s), &v->addr);
}

int addr_parse_voters(const char *s, struct addr_voter *out, size_t max,
                      size_t *n)
{
    *n = 0;
    while (*s != '\0') {
        while (*s == ' ' || *s == ',') {
            s++;
        }
        size_t len = strcspn(s, ",");
        while (len > 0 && s[len - 1] == ' ') {
            len--;
        }
        if (len == 0) {
            break;
        }
        if (*n == max) {
            return RC_TOO_LARGE;
        }
        int rv = parse_voter(s, len, &out[*n]);
        if (rv != RC_OK) {
            return rv;
        }
        for (size_t i = 0; i < *n; i++) {
            if (out[i].id == out[*n].id) {
                return RC_INVALID;
            }
        }
        (*n)++;
        s += strcspn(s, ",");
    }
    return *n == 0 ? RC_INVALID : RC_OK;
}

void addr_format(const struct addr *a, char *out, size_t cap)
{
    snprintf(out, cap, "%s:%d", a->host, a->port);
}
