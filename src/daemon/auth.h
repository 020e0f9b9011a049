/* auth.h - who is asking, and what they may do in `gpupool serve`: the
 * API's tokens (stored hashed) and the tenants' members.
 *
 * Key decisions:
 *  - The tokens file holds only hashes, one token a line:
 *        sha256:<64 hex digits> USER [TENANT...|admin]
 *    A presented token is hashed once (SHA-256, GnuTLS) and compared with
 *    every line, in constant time and without stopping at a match, so
 *    neither the file nor the timing tells a token. `gpupool token new`
 *    makes a token (32 random bytes from /dev/urandom, in hex) and its
 *    line.
 *  - Membership is deny by default. A tenant's members are the "users" of
 *    its definition (the tenants file, or POST/PATCH /v1/tenants); "*"
 *    lets everyone in; a tenant defined without users is for admins only.
 *    With no tenants file, the tenant "default" (until it is defined) is
 *    open to everyone, so a daemon without configuration works for all.
 *  - A token that names tenants acts in exactly those (whatever the
 *    tenants' users say: the tokens file is the admin's word); one that
 *    names none acts as its user, in the tenants that list the user.
 *    Admins (root, the daemon's own user, tokens marked admin) act in
 *    every tenant.
 */
#ifndef GPUPOOL_DAEMON_AUTH_H
#define GPUPOOL_DAEMON_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

#include "gpupool/err.h"

#define GP_AUTH_DIGEST_BYTES 32 /* SHA-256 */
#define GP_AUTH_TOKEN_BYTES 32  /* random bytes of a new token */
#define GP_AUTH_TOKEN_MAX 256   /* longest token accepted from a client */
#define GP_AUTH_MAX_TOKENS 1024 /* lines of a tokens file */
#define GP_AUTH_LINE_MAX 4096   /* bytes of one line */
#define GP_AUTH_SCOPE_MAX 1024  /* bytes of a token's tenants, NULs too */
#define GP_AUTH_USER_MAX 64     /* bytes of a user name, with its NUL */

/* Who is asking. */
struct gp_identity {
    bool known; /* false: a TCP request without a valid token */
    bool admin; /* root or the daemon's own user on the socket, or a token
                   marked admin (or one of root) */
    uid_t uid;  /* Unix socket: the peer's; token: the user's */
    gid_t gid;
    char user[GP_AUTH_USER_MAX]; /* its name ("uid:1234" when it has none) */
    char via[16];                /* "unix" or "token" */
    /* a token that names tenants acts in those only: NUL-separated names,
     * ntenants of them */
    bool scoped;
    size_t ntenants;
    char tenants[GP_AUTH_SCOPE_MAX];
};

/* One line of the tokens file. */
struct gp_auth_token {
    unsigned char digest[GP_AUTH_DIGEST_BYTES];
    size_t line; /* where it is in the file */
    char user[GP_AUTH_USER_MAX];
    uid_t uid;
    gid_t gid;
    bool admin;
    bool scoped; /* it names tenants */
    size_t ntenants;
    char tenants[GP_AUTH_SCOPE_MAX]; /* NUL-separated */
};

/* SHA-256 of len bytes. GP_EIO if GnuTLS fails. */
int gp_auth_hash(const void *data, size_t len,
                 unsigned char digest[GP_AUTH_DIGEST_BYTES]);

/* A new token: GP_AUTH_TOKEN_BYTES from /dev/urandom as lowercase hex
 * (64 characters and a NUL). GP_EIO (diag names /dev/urandom). */
int gp_auth_token_new(char hex[2 * GP_AUTH_TOKEN_BYTES + 1],
                      struct gp_diag *diag);

/* The tokens file's line for a token: "sha256:<hex> USER [TENANT...|admin]"
 * (no newline) into buf. GP_ERANGE if it does not fit, GP_EINVAL for an
 * admin token that also names tenants. */
int gp_auth_token_line(const char *token, const char *user,
                       const char *const *tenants, size_t ntenants, bool admin,
                       char *buf, size_t len);

/* Parse a tokens file's text; `name` is the file's name for the errors
 * ("tokens:3: ..."). Every USER must exist on this machine (its uid and
 * gid are looked up now); TENANT names follow the tenants file's rules;
 * the same hash twice is an error. *out is malloc'd (NULL when empty).
 * GP_EPARSE / GP_ERANGE / GP_EEXIST / GP_ENOMEM with diag naming file:line;
 * nothing is written to *out on an error. */
int gp_auth_tokens_parse(const char *text, size_t len, const char *name,
                         struct gp_auth_token **out, size_t *nout,
                         struct gp_diag *diag);
/* Read and parse a tokens file. A missing file is no tokens (TCP then
 * admits nobody); a file others may write is refused (GP_EINVAL: whoever
 * writes it can make themselves admin). GP_EIO when it cannot be read. */
int gp_auth_tokens_load(const char *path, struct gp_auth_token **out,
                        size_t *nout, struct gp_diag *diag);
/* The line whose hash is the presented token's, or NULL. Every line is
 * compared, in constant time each. */
const struct gp_auth_token *gp_auth_token_find(const struct gp_auth_token *t,
                                               size_t n, const char *presented);
/* Fill an identity from a token's line. */
void gp_auth_identity_of(const struct gp_auth_token *t,
                         struct gp_identity *who);

/* Members: a JSON object, tenant name -> array of user names ("*" =
 * everyone), one entry for every defined tenant (an empty array: admins
 * only). */

/* May `who` act in `tenant` (submit to it, see and touch its jobs, see its
 * books)? open_default: the tenant "default" is open to everyone when it
 * is not in `members` (no tenants file). */
bool gp_auth_may(const json_t *members, bool open_default,
                 const struct gp_identity *who, const char *tenant);
/* Is `tenant` defined (in members), or the open "default"? */
bool gp_auth_is_defined(const json_t *members, bool open_default,
                        const char *tenant);

#endif
