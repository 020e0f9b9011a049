/* http.h - the daemon's HTTP front: libmicrohttpd's thread parses requests
 * and hands them to the loop, which owns all state.
 *
 * Key decision (STYLE.md, "The daemon"): MHD's thread never touches the
 * core, the store or the backend. It reads the request (a body capped at
 * max_body), learns who is asking (the peer's credentials on the Unix
 * socket, once per connection; a bearer token over TCP, auth.h), queues
 * the request, pokes the loop's eventfd when the queue was empty, and
 * suspends the connection until the loop has answered. The loop takes
 * requests with gp_http_take, batches them into one store transaction
 * (group commit) and answers each with gp_http_reply after the commit,
 * which resumes its connection; MHD's thread sends the answer.
 */
#ifndef GPUPOOL_DAEMON_HTTP_H
#define GPUPOOL_DAEMON_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/auth.h" /* struct gp_identity */
#include "gpupool/err.h"

#define GP_HTTP_MAX_ARGS 16

struct gp_http_arg {
    char key[32];
    char value[256];
};

struct gp_http_request {
    char method[8];
    char path[256];                            /* without the query */
    struct gp_http_arg args[GP_HTTP_MAX_ARGS]; /* the query, decoded */
    size_t nargs;
    bool args_too_long; /* some did not fit: refuse the request */
    char *body;         /* NUL-terminated; "" if none */
    size_t body_len;
    struct gp_identity who;
    /* the answer, written by gp_http_reply */
    unsigned status;
    char *reply; /* malloc'd */
    size_t reply_len;
    const char *content_type;
    bool done;
    struct gp_http_request *next; /* in the queue */
};

struct gp_http_options {
    const char *socket_path; /* Unix socket; NULL = none */
    const char *listen;      /* "host:port" for TCP; NULL or "" = none */
    const char *tls_cert;    /* PEM files; NULL = plain HTTP (only with
                                allow_plain, on a loopback address) */
    const char *tls_key;
    bool allow_plain;        /* TCP without TLS: loopback only */
    const char *tokens_file; /* hashed tokens (auth.h) */
    size_t max_body;         /* bytes; a larger body is a 413 */
    int wake_fd;             /* the loop's eventfd: written when a
                                request is queued into an empty queue */
};

struct gp_http;

/* Start listening. The socket file is created mode 0666 (anyone on the
 * machine may connect; what they may do follows from who they are).
 * Plain HTTP on TCP (no tls_cert/tls_key, allow_plain) is refused unless
 * the address is a loopback one (127.0.0.0/8, ::1): GP_EINVAL naming the
 * address. GP_EIO with diag naming the socket or address; GP_EPARSE for a
 * bad listen address or tokens file (diag: file:line). */
int gp_http_start(struct gp_http **out, const struct gp_http_options *o,
                  struct gp_diag *diag);
/* Re-read the tokens file (SIGHUP). On an error the old tokens stay. */
int gp_http_reload_tokens(struct gp_http *h, struct gp_diag *diag);
/* Stop accepting, answer 503 to whatever is still queued, join the
 * threads and remove the socket file. NULL is a no-op. */
void gp_http_stop(struct gp_http *h);

/* Are requests queued? The loop is woken (wake_fd) only when a request
 * finds the queue empty: a loop that leaves requests queued (a full
 * batch) must not wait before its next turn. */
bool gp_http_pending(struct gp_http *h);
/* The next queued request, or NULL. Loop thread only. */
struct gp_http_request *gp_http_take(struct gp_http *h);
/* Answer a request taken with gp_http_take; `body` is copied. After this
 * the request is MHD's thread's again (it may be freed at once): the
 * caller must not touch it. */
void gp_http_reply(struct gp_http *h, struct gp_http_request *r,
                   unsigned status, const char *content_type, const char *body,
                   size_t len);

/* A query argument's value, or NULL. */
const char *gp_http_arg(const struct gp_http_request *r, const char *key);

/* The HTTP status for a gpupool error code (the one table). */
unsigned gp_http_status_of(int err);

#endif
