/* auth.c - hashed API tokens and tenant membership (see auth.h). */
#include "daemon/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "trace/csv.h"     /* gp_text_check */
#include "trace/tenants.h" /* GP_TENANT_NAME_MAX, gp_tenant_user_check */

#define PREFIX "sha256:"
#define PREFIX_LEN 7
#define MAX_FILE ((size_t)GP_AUTH_MAX_TOKENS * GP_AUTH_LINE_MAX)

int gp_auth_hash(const void *data, size_t len,
                 unsigned char digest[GP_AUTH_DIGEST_BYTES])
{
    return gnutls_hash_fast(GNUTLS_DIG_SHA256, data, len, digest) == 0 ? GP_OK
                                                                       : GP_EIO;
}

static void to_hex(const unsigned char *b, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = '\0';
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int gp_auth_token_new(char hex[2 * GP_AUTH_TOKEN_BYTES + 1],
                      struct gp_diag *diag)
{
    unsigned char b[GP_AUTH_TOKEN_BYTES];
    size_t got = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return gp_diag_set(diag, GP_EIO, "/dev/urandom", "cannot open: %s",
                           strerror(errno));
    while (got < sizeof(b)) {
        ssize_t n = read(fd, b + got, sizeof(b) - got);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;

            close(fd);
            return gp_diag_set(diag, GP_EIO, "/dev/urandom", "cannot read: %s",
                               strerror(e));
        }
        got += (size_t)n;
    }
    close(fd);
    to_hex(b, sizeof(b), hex);
    memset(b, 0, sizeof(b));
    return GP_OK;
}

int gp_auth_token_line(const char *token, const char *user,
                       const char *const *tenants, size_t ntenants, bool admin,
                       char *buf, size_t len)
{
    unsigned char d[GP_AUTH_DIGEST_BYTES];
    char hex[2 * GP_AUTH_DIGEST_BYTES + 1];
    size_t o;
    int n;

    if (admin && ntenants)
        return GP_EINVAL;
    if (gp_auth_hash(token, strlen(token), d) != GP_OK)
        return GP_EIO;
    to_hex(d, sizeof(d), hex);
    n = snprintf(buf, len, PREFIX "%s %s%s", hex, user, admin ? " admin" : "");
    if (n < 0 || (size_t)n >= len)
        return GP_ERANGE;
    o = (size_t)n;
    for (size_t i = 0; i < ntenants; i++) {
        n = snprintf(buf + o, len - o, " %s", tenants[i]);
        if (n < 0 || (size_t)n >= len - o)
            return GP_ERANGE;
        o += (size_t)n;
    }
    return GP_OK;
}

/* ---- the tokens file ------------------------------------------------------
 */

/* One line, split at blanks (modified in place). */
static int parse_line(char *line, const char *where, struct gp_auth_token *t,
                      bool *blank, struct gp_diag *diag)
{
    static const char form[] = "expected 'sha256:<64 hex digits> USER "
                               "[TENANT...|admin]' (`gpupool token new` "
                               "makes one)";
    char *save = NULL, *hash, *user, *w;
    struct passwd pw, *res = NULL;
    char pwbuf[4096];
    const char *why;
    size_t o = 0;

    *blank = false;
    hash = strtok_r(line, " \t\r\n", &save);
    if (!hash || *hash == '#') {
        *blank = true;
        return GP_OK;
    }
    memset(t, 0, sizeof(*t));
    if (strncmp(hash, PREFIX, PREFIX_LEN) != 0)
        return gp_diag_set(diag, GP_EPARSE, where,
                           "%s; a plain token is refused: the file holds "
                           "hashes only",
                           form);
    hash += PREFIX_LEN;
    if (strlen(hash) != 2 * GP_AUTH_DIGEST_BYTES)
        return gp_diag_set(diag, GP_EPARSE, where,
                           "%s: the hash has %zu hex digits", form,
                           strlen(hash));
    for (size_t i = 0; i < GP_AUTH_DIGEST_BYTES; i++) {
        int hi = hex_value(hash[2 * i]), lo = hex_value(hash[2 * i + 1]);

        if (hi < 0 || lo < 0)
            return gp_diag_set(diag, GP_EPARSE, where,
                               "%s: '%c' is not a hex digit", form,
                               hi < 0 ? hash[2 * i] : hash[2 * i + 1]);
        t->digest[i] = (unsigned char)(hi << 4 | lo);
    }
    if (!(user = strtok_r(NULL, " \t\r\n", &save)))
        return gp_diag_set(diag, GP_EPARSE, where, "%s: no USER", form);
    if (strcmp(user, "*") == 0 ||
        (why = gp_tenant_user_check(user, strlen(user))))
        return gp_diag_set(diag, GP_EPARSE, where, "user '%.64s': %s", user,
                           strcmp(user, "*") == 0 ? "a token is one user's"
                                                  : why);
    if (getpwnam_r(user, &pw, pwbuf, sizeof(pwbuf), &res) != 0 || !res)
        return gp_diag_set(diag, GP_EPARSE, where,
                           "user '%s' does not exist on this machine", user);
    snprintf(t->user, sizeof(t->user), "%s", user);
    t->uid = res->pw_uid;
    t->gid = res->pw_gid;
    t->admin = res->pw_uid == 0;
    while ((w = strtok_r(NULL, " \t\r\n", &save))) {
        char whyb[64];
        size_t len = strlen(w);

        if (strcmp(w, "admin") == 0) {
            if (t->scoped || strtok_r(NULL, " \t\r\n", &save))
                return gp_diag_set(diag, GP_EPARSE, where,
                                   "admin and tenants do not mix: an admin "
                                   "token acts in every tenant");
            t->admin = true;
            break;
        }
        if (len > GP_TENANT_NAME_MAX ||
            gp_text_check(w, len, whyb, sizeof(whyb)))
            return gp_diag_set(diag, GP_EPARSE, where,
                               "tenant '%.64s': not a tenant name (1 to %u "
                               "bytes of printable UTF-8)",
                               w, GP_TENANT_NAME_MAX);
        if (o + len + 1 > sizeof(t->tenants))
            return gp_diag_set(diag, GP_ERANGE, where,
                               "the tenants of one token take at most %d "
                               "bytes",
                               GP_AUTH_SCOPE_MAX - 1);
        memcpy(t->tenants + o, w, len + 1);
        o += len + 1;
        t->ntenants++;
        t->scoped = true;
    }
    if (t->scoped && t->admin)
        return gp_diag_set(diag, GP_EPARSE, where,
                           "a token of root is an admin's: it cannot be "
                           "kept to tenants");
    return GP_OK;
}

static bool same_digest(const unsigned char *a, const unsigned char *b)
{
    unsigned char d = 0;

    for (size_t i = 0; i < GP_AUTH_DIGEST_BYTES; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

int gp_auth_tokens_parse(const char *text, size_t len, const char *name,
                         struct gp_auth_token **out, size_t *nout,
                         struct gp_diag *diag)
{
    struct gp_auth_token *t = NULL;
    size_t n = 0, lineno = 0, at = 0;
    char where[200];
    char *line = NULL;
    int rc = GP_OK;

    if (!(line = malloc(GP_AUTH_LINE_MAX + 1)))
        return gp_diag_set(diag, GP_ENOMEM, name, "out of memory");
    while (at < len) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t ll = (size_t)((nl ? nl : text + len) - (text + at));
        bool blank;

        lineno++;
        snprintf(where, sizeof(where), "%s:%zu", name, lineno);
        if (ll > GP_AUTH_LINE_MAX) {
            rc = gp_diag_set(diag, GP_ERANGE, where,
                             "line longer than %d bytes", GP_AUTH_LINE_MAX);
            goto fail;
        }
        if (memchr(text + at, '\0', ll)) {
            rc = gp_diag_set(diag, GP_EPARSE, where, "a NUL byte");
            goto fail;
        }
        memcpy(line, text + at, ll);
        line[ll] = '\0';
        at += ll + (nl ? 1 : 0);
        if (!t && !(t = calloc(GP_AUTH_MAX_TOKENS, sizeof(*t)))) {
            rc = gp_diag_set(diag, GP_ENOMEM, name, "out of memory");
            goto fail;
        }
        if (n == GP_AUTH_MAX_TOKENS) {
            struct gp_auth_token spare;

            if ((rc = parse_line(line, where, &spare, &blank, diag)) != GP_OK)
                goto fail;
            if (blank)
                continue;
            rc = gp_diag_set(diag, GP_ERANGE, where, "more than %d tokens",
                             GP_AUTH_MAX_TOKENS);
            goto fail;
        }
        if ((rc = parse_line(line, where, &t[n], &blank, diag)) != GP_OK)
            goto fail;
        if (blank)
            continue;
        t[n].line = lineno;
        for (size_t k = 0; k < n; k++)
            if (same_digest(t[k].digest, t[n].digest)) {
                rc = gp_diag_set(diag, GP_EEXIST, where,
                                 "the same token as on line %zu", t[k].line);
                goto fail;
            }
        n++;
    }
    free(line);
    if (n == 0) {
        free(t);
        t = NULL;
    }
    *out = t;
    *nout = n;
    return GP_OK;
fail:
    free(line);
    free(t);
    return rc;
}

int gp_auth_tokens_load(const char *path, struct gp_auth_token **out,
                        size_t *nout, struct gp_diag *diag)
{
    struct stat st;
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    int rc;

    if (!path || !*path) {
        *out = NULL;
        *nout = 0;
        return GP_OK;
    }
    if (!(f = fopen(path, "rb"))) {
        if (errno == ENOENT) {
            *out = NULL;
            *nout = 0;
            return GP_OK; /* no tokens: TCP admits nobody */
        }
        return gp_diag_set(diag, GP_EIO, path, "cannot read: %s",
                           strerror(errno));
    }
    if (fstat(fileno(f), &st) != 0) {
        rc =
            gp_diag_set(diag, GP_EIO, path, "cannot stat: %s", strerror(errno));
        goto out;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        rc = gp_diag_set(diag, GP_EINVAL, path,
                         "others may write it (mode %04o): whoever writes it "
                         "can make themselves admin; chmod go-w",
                         (unsigned)(st.st_mode & 07777));
        goto out;
    }
    if (!(buf = malloc(MAX_FILE + 1))) {
        rc = gp_diag_set(diag, GP_ENOMEM, path, "out of memory");
        goto out;
    }
    len = fread(buf, 1, MAX_FILE + 1, f);
    if (ferror(f)) {
        rc = gp_diag_set(diag, GP_EIO, path, "read error");
        goto out;
    }
    if (len > MAX_FILE) {
        rc = gp_diag_set(diag, GP_ERANGE, path, "larger than %zu bytes",
                         MAX_FILE);
        goto out;
    }
    rc = gp_auth_tokens_parse(buf, len, path, out, nout, diag);
out:
    free(buf);
    fclose(f);
    return rc;
}

const struct gp_auth_token *gp_auth_token_find(const struct gp_auth_token *t,
                                               size_t n, const char *presented)
{
    unsigned char d[GP_AUTH_DIGEST_BYTES];
    const struct gp_auth_token *hit = NULL;
    size_t len = presented ? strnlen(presented, GP_AUTH_TOKEN_MAX + 1) : 0;

    if (len == 0 || len > GP_AUTH_TOKEN_MAX ||
        gp_auth_hash(presented, len, d) != GP_OK)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (same_digest(t[i].digest, d))
            hit = &t[i]; /* no early exit: every line costs the same */
    return hit;
}

void gp_auth_identity_of(const struct gp_auth_token *t, struct gp_identity *who)
{
    who->known = true;
    who->admin = t->admin;
    who->uid = t->uid;
    who->gid = t->gid;
    snprintf(who->user, sizeof(who->user), "%s", t->user);
    snprintf(who->via, sizeof(who->via), "token");
    who->scoped = t->scoped;
    who->ntenants = t->ntenants;
    memcpy(who->tenants, t->tenants, sizeof(who->tenants));
}

/* ---- membership -----------------------------------------------------------
 */

bool gp_auth_is_defined(const json_t *members, bool open_default,
                        const char *tenant)
{
    if (json_object_get(members, tenant))
        return true;
    return open_default && strcmp(tenant, "default") == 0;
}

bool gp_auth_may(const json_t *members, bool open_default,
                 const struct gp_identity *who, const char *tenant)
{
    const json_t *users, *u;
    size_t i;

    if (!who->known || !tenant)
        return false;
    if (who->admin)
        return true;
    if (who->scoped) {
        const char *p = who->tenants;

        for (size_t k = 0; k < who->ntenants; k++, p += strlen(p) + 1)
            if (strcmp(p, tenant) == 0)
                return true;
        return false;
    }
    if (!(users = json_object_get(members, tenant)))
        return open_default && strcmp(tenant, "default") == 0;
    json_array_foreach(users, i, u)
    {
        const char *name = json_string_value(u);

        if (name && (strcmp(name, "*") == 0 || strcmp(name, who->user) == 0))
            return true;
    }
    return false;
}
