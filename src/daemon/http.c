/* http.c - libmicrohttpd on a Unix socket (and TCP with TLS and bearer
 * tokens), handing each request to the loop thread (see http.h).
 *
 * Key decision: one MHD thread per listener, on epoll, with suspended
 * connections. A request that is all in is queued for the loop and its
 * connection suspended; the loop answers in batches after one commit (a
 * burst of submits costs one fsync) and resumes each connection, and the
 * MHD thread sends the answers. No thread waits per connection: with
 * a thread per connection every answer cost a wake-up and a switch to
 * that connection's thread, which on a busy machine took more time than
 * the loop's own work (bench/README.md, "Where the submit time went").
 * A Unix socket peer is identified once per connection (its credentials
 * cannot change while it is open).
 */
#define _GNU_SOURCE /* struct ucred, SO_PEERCRED */
#include "daemon/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <microhttpd.h>

#define MAX_CONNECTIONS 256
#define MAX_PEM (1 << 20)

struct conn;

struct listener {
    struct gp_http *h;
    struct MHD_Daemon *mhd;
    int fd;
    bool unix_socket;
    bool tls;
    char *cert, *key; /* PEM, kept for MHD's life */
    /* requests' records kept for reuse: taken and given back by MHD's one
     * thread of this listener only (a record is 5 KiB, and its malloc and
     * free each request cost more than the rest of the hand-off) */
    struct conn *spare;
    unsigned nspare;
};

#define MAX_SPARE 64

struct gp_http {
    struct gp_http_options o;
    char *socket_path;
    char *tokens_file;
    struct listener lunix, ltcp;
    pthread_mutex_t mu;
    struct gp_http_request *head, *tail; /* queued for the loop */
    bool stopping;
    struct gp_auth_token *tokens;
    size_t ntokens;
};

/* A request being read, queued or answered; `c` is suspended while the
 * loop has it. */
struct conn {
    struct gp_http_request req; /* first: a request is its conn */
    size_t cap;
    bool too_big;
    struct MHD_Connection *c;
};

/* A Unix socket connection's peer, identified when it connects. */
struct peer {
    struct gp_identity who;
};

unsigned gp_http_status_of(int err)
{
    switch (err) {
    case GP_OK:
        return 200;
    case GP_EINVAL:
    case GP_EPARSE:
    case GP_ERANGE:
        return 400;
    case GP_ENOENT:
        return 404;
    case GP_EEXIST:
    case GP_ESTATE:
        return 409;
    case GP_ENOFIT:
        return 422;
    case GP_ENOMEM:
        return 503;
    default:
        return 500;
    }
}

int gp_http_reload_tokens(struct gp_http *h, struct gp_diag *diag)
{
    struct gp_auth_token *t;
    size_t n;
    int rc = gp_auth_tokens_load(h->tokens_file, &t, &n, diag);

    if (rc != GP_OK)
        return rc;
    pthread_mutex_lock(&h->mu);
    free(h->tokens);
    h->tokens = t;
    h->ntokens = n;
    pthread_mutex_unlock(&h->mu);
    return GP_OK;
}

/* ---- identity ------------------------------------------------------------ */

static void name_user(struct gp_identity *who)
{
    struct passwd pw, *res = NULL;
    char buf[1024];

    if (getpwuid_r(who->uid, &pw, buf, sizeof(buf), &res) == 0 && res)
        snprintf(who->user, sizeof(who->user), "%s", res->pw_name);
    else
        snprintf(who->user, sizeof(who->user), "uid:%u", (unsigned)who->uid);
}

/* A Unix socket's peer from its credentials. */
static void identify_peer(struct MHD_Connection *c, struct gp_identity *who)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct ucred cred;
    socklen_t len = sizeof(cred);

    memset(who, 0, sizeof(*who));
    snprintf(who->via, sizeof(who->via), "unix");
    if (ci &&
        getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
        who->known = true;
        who->uid = cred.uid;
        who->gid = cred.gid;
        who->admin = cred.uid == 0 || cred.uid == geteuid();
        name_user(who);
    }
}

static void identify(struct listener *l, struct MHD_Connection *c,
                     struct gp_identity *who)
{
    memset(who, 0, sizeof(*who));
    if (l->unix_socket) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        const struct peer *p = ci ? ci->socket_context : NULL;

        if (p)
            *who = p->who;
        else
            identify_peer(c, who);
        return;
    }
    snprintf(who->via, sizeof(who->via), "token");
    {
        const char *auth =
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
        struct gp_http *h = l->h;
        const struct gp_auth_token *t;

        if (!auth || strncmp(auth, "Bearer ", 7) != 0)
            return;
        pthread_mutex_lock(&h->mu);
        if ((t = gp_auth_token_find(h->tokens, h->ntokens, auth + 7)))
            gp_auth_identity_of(t, who);
        pthread_mutex_unlock(&h->mu);
    }
}

/* ---- requests ------------------------------------------------------------ */

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status,
                               const char *type, const char *body, size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(
        len, (void *)(uintptr_t)body, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result ret;

    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result respond_error(struct MHD_Connection *c, unsigned status,
                                     const char *err, const char *msg)
{
    char body[512];
    int n = snprintf(body, sizeof(body),
                     "{\"error\":\"%s\",\"message\":\"%s\"}\n", err, msg);

    return respond(c, status, "application/json", body, (size_t)n);
}

/* Called with h->mu held. The loop is woken only when the queue was
 * empty: it takes requests until the queue is empty, so one that finds it
 * non-empty is taken in the turn under way or the one that follows. */
static void enqueue(struct gp_http *h, struct gp_http_request *r)
{
    uint64_t one = 1;

    r->next = NULL;
    if (h->tail) {
        h->tail->next = r;
        h->tail = r;
        return;
    }
    h->head = h->tail = r;
    if (write(h->o.wake_fd, &one, sizeof(one)) < 0) {
        /* the eventfd's counter is full: the loop is awake anyway */
    }
}

/* A query argument, decoded by MHD; past the cap or the sizes, it is
 * marked so the loop can refuse the request rather than act on part of it. */
static enum MHD_Result add_arg(void *cls, enum MHD_ValueKind kind,
                               const char *key, const char *value)
{
    struct conn *cn = cls;
    struct gp_http_arg *a;

    (void)kind;
    if (cn->req.nargs == GP_HTTP_MAX_ARGS || strlen(key) >= sizeof(a->key) ||
        (value && strlen(value) >= sizeof(a->value))) {
        cn->req.args_too_long = true;
        return MHD_YES;
    }
    a = &cn->req.args[cn->req.nargs++];
    snprintf(a->key, sizeof(a->key), "%s", key);
    snprintf(a->value, sizeof(a->value), "%s", value ? value : "");
    return MHD_YES;
}

/* A cleared record, from the spare ones when there are. The query's
 * array (most of the record) is left as it is: nargs says how much of it
 * holds arguments. */
static struct conn *conn_new(struct listener *l)
{
    struct conn *cn = l->spare;
    struct gp_http_request *r;

    if (cn) {
        l->spare = (struct conn *)cn->req.next;
        l->nspare--;
    } else if (!(cn = malloc(sizeof(*cn)))) {
        return NULL;
    }
    r = &cn->req;
    memset(r, 0, offsetof(struct gp_http_request, args));
    memset(&r->nargs, 0, sizeof(*r) - offsetof(struct gp_http_request, nargs));
    cn->cap = 0;
    cn->too_big = false;
    cn->c = NULL;
    return cn;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
                              const char *url, const char *method,
                              const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    struct listener *l = cls;
    struct gp_http *h = l->h;
    struct conn *cn = *con_cls;
    const char *q;

    (void)version;
    if (!cn) { /* the headers are in: set up */
        if (!(cn = conn_new(l)))
            return MHD_NO;
        *con_cls = cn;
        return MHD_YES;
    }
    if (cn->req.done) /* the loop answered and resumed the connection */
        return respond(c, cn->req.status, cn->req.content_type, cn->req.reply,
                       cn->req.reply_len);
    if (*upload_size) { /* a piece of the body */
        size_t need = cn->req.body_len + *upload_size + 1;

        if (need > h->o.max_body + 1 || cn->too_big) {
            cn->too_big = true;
        } else {
            if (need > cn->cap) {
                size_t cap = cn->cap ? cn->cap * 2 : 4096;
                char *b;

                while (cap < need)
                    cap *= 2;
                if (!(b = realloc(cn->req.body, cap)))
                    return MHD_NO;
                cn->req.body = b;
                cn->cap = cap;
            }
            memcpy(cn->req.body + cn->req.body_len, upload, *upload_size);
            cn->req.body_len += *upload_size;
            cn->req.body[cn->req.body_len] = '\0';
        }
        *upload_size = 0;
        return MHD_YES;
    }
    /* the whole request is in */
    if (cn->too_big)
        return respond_error(c, 413, "RANGE", "request body too large");
    if (strlen(url) >= sizeof(cn->req.path) || strlen(method) >= 8)
        return respond_error(c, 414, "RANGE", "request line too long");
    snprintf(cn->req.method, sizeof(cn->req.method), "%s", method);
    snprintf(cn->req.path, sizeof(cn->req.path), "%s", url);
    if ((q = strchr(url, '?'))) /* MHD strips it; kept for safety */
        cn->req.path[q - url] = '\0';
    if (!cn->req.body) {
        if (!(cn->req.body = calloc(1, 1)))
            return MHD_NO;
    }
    identify(l, c, &cn->req.who);
    if (!cn->req.who.known && strcmp(cn->req.path, "/v1/health") != 0)
        return respond_error(c, 401, "AUTH",
                             l->unix_socket
                                 ? "cannot read the peer's credentials"
                                 : "a valid bearer token is required");
    cn->req.nargs = 0;
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_arg, cn);
    pthread_mutex_lock(&h->mu);
    if (h->stopping) {
        pthread_mutex_unlock(&h->mu);
        return respond_error(c, 503, "STATE", "the daemon is shutting down");
    }
    /* suspended before the loop can see it, so its resume always follows */
    cn->c = c;
    MHD_suspend_connection(c);
    enqueue(h, &cn->req);
    pthread_mutex_unlock(&h->mu);
    return MHD_YES;
}

static void notify_connection(void *cls, struct MHD_Connection *c,
                              void **socket_context,
                              enum MHD_ConnectionNotificationCode toe)
{
    struct listener *l = cls;
    struct peer *p;

    if (!l->unix_socket)
        return;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        /* without memory the peer is identified at each request */
        if ((p = malloc(sizeof(*p)))) {
            identify_peer(c, &p->who);
            *socket_context = p;
        }
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        free(*socket_context);
        *socket_context = NULL;
    }
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    struct listener *l = cls;
    struct conn *cn = *con_cls;

    (void)c;
    (void)toe;
    if (!cn)
        return;
    free(cn->req.body);
    free(cn->req.reply);
    if (l->nspare < MAX_SPARE) {
        cn->req.next = (struct gp_http_request *)l->spare;
        l->spare = cn;
        l->nspare++;
    } else {
        free(cn);
    }
    *con_cls = NULL;
}

/* ---- the loop's side ----------------------------------------------------- */

bool gp_http_pending(struct gp_http *h)
{
    bool any;

    pthread_mutex_lock(&h->mu);
    any = h->head != NULL;
    pthread_mutex_unlock(&h->mu);
    return any;
}

struct gp_http_request *gp_http_take(struct gp_http *h)
{
    struct gp_http_request *r;

    pthread_mutex_lock(&h->mu);
    r = h->head;
    if (r) {
        h->head = r->next;
        if (!h->head)
            h->tail = NULL;
        r->next = NULL;
    }
    pthread_mutex_unlock(&h->mu);
    return r;
}

void gp_http_reply(struct gp_http *h, struct gp_http_request *r,
                   unsigned status, const char *content_type, const char *body,
                   size_t len)
{
    struct conn *cn = (struct conn *)r;
    char *copy = malloc(len + 1);

    (void)h;
    if (copy) {
        memcpy(copy, body, len);
        copy[len] = '\0';
        r->status = status;
        r->reply = copy;
        r->reply_len = len;
        r->content_type = content_type;
    } else {
        r->status = 503;
        r->reply = NULL;
        r->reply_len = 0;
        r->content_type = "application/json";
    }
    r->done = true;
    /* from here the request is MHD's thread's: it may be freed at once */
    MHD_resume_connection(cn->c);
}

/* ---- listeners ----------------------------------------------------------- */

static int unix_listen(const char *path, int *fd_out, struct gp_diag *diag)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    struct stat st;
    int fd;

    if (strlen(path) >= sizeof(sa.sun_path))
        return gp_diag_set(diag, GP_EINVAL, path,
                           "a Unix socket path must be under %zu bytes",
                           sizeof(sa.sun_path));
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return gp_diag_set(diag, GP_EIO, path, "socket: %s", strerror(errno));
    if (lstat(path, &st) == 0) {
        /* a socket left by a daemon that died: replace it, unless a live
         * daemon answers on it */
        if (!S_ISSOCK(st.st_mode)) {
            close(fd);
            return gp_diag_set(diag, GP_EEXIST, path,
                               "exists and is not a socket");
        }
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
            close(fd);
            return gp_diag_set(diag, GP_EEXIST, path,
                               "another daemon is listening on it");
        }
        close(fd);
        unlink(path);
        if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
            return gp_diag_set(diag, GP_EIO, path, "socket: %s",
                               strerror(errno));
    }
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        chmod(path, 0666) < 0 || listen(fd, 64) < 0) {
        int e = errno;

        close(fd);
        return gp_diag_set(diag, GP_EIO, path, "cannot listen: %s",
                           strerror(e));
    }
    *fd_out = fd;
    return GP_OK;
}

/* 127.0.0.0/8, ::1, or ::ffff:127.x.y.z */
static bool is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a =
            &((const struct sockaddr_in6 *)sa)->sin6_addr;

        return IN6_IS_ADDR_LOOPBACK(a) ||
               (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
    }
    return false;
}

static int tcp_listen(const char *addr, bool loopback_only, int *fd_out,
                      struct gp_diag *diag)
{
    char host[256], *colon;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE},
                    *res = NULL;
    int fd = -1, one = 1, rc;

    snprintf(host, sizeof(host), "%s", addr);
    if (!(colon = strrchr(host, ':')) || !colon[1])
        return gp_diag_set(diag, GP_EPARSE, addr,
                           "expected HOST:PORT, e.g. 127.0.0.1:8470");
    *colon = '\0';
    if (host[0] == '[' && colon[-1] == ']') { /* [::1]:8470 */
        colon[-1] = '\0';
        memmove(host, host + 1, strlen(host));
    }
    if ((rc = getaddrinfo(*host ? host : NULL, colon + 1, &hints, &res)))
        return gp_diag_set(diag, GP_EPARSE, addr, "cannot resolve: %s",
                           gai_strerror(rc));
    /* tokens in clear may cross only the loopback interface */
    if (loopback_only && !is_loopback(res->ai_addr)) {
        freeaddrinfo(res);
        return gp_diag_set(diag, GP_EINVAL, addr,
                           "plain HTTP (server.tls = off) is refused on an "
                           "address that is not loopback (127.0.0.0/8, "
                           "[::1]): tokens would cross the network in clear; "
                           "listen on 127.0.0.1 or give server.tls_cert and "
                           "server.tls_key");
    }
    fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC,
                res->ai_protocol);
    if (fd < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 64) < 0) {
        int e = errno;

        if (fd >= 0)
            close(fd);
        freeaddrinfo(res);
        return gp_diag_set(diag, GP_EIO, addr, "cannot listen: %s",
                           strerror(e));
    }
    freeaddrinfo(res);
    *fd_out = fd;
    return GP_OK;
}

static int read_pem(const char *path, char **out, struct gp_diag *diag)
{
    FILE *f = fopen(path, "r");
    char *buf;
    size_t n;

    if (!f)
        return gp_diag_set(diag, GP_EIO, path, "cannot read: %s",
                           strerror(errno));
    if (!(buf = malloc(MAX_PEM + 1))) {
        fclose(f);
        return gp_diag_set(diag, GP_ENOMEM, path, "out of memory");
    }
    n = fread(buf, 1, MAX_PEM + 1, f);
    fclose(f);
    if (n == 0 || n > MAX_PEM) {
        free(buf);
        return gp_diag_set(diag, GP_EPARSE, path,
                           "expected a PEM file of at most 1 MiB");
    }
    buf[n] = '\0';
    *out = buf;
    return GP_OK;
}

static int start_listener(struct listener *l, struct gp_diag *diag)
{
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
                     MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC;

    if (l->tls)
        flags |= MHD_USE_TLS;
    if (l->tls)
        l->mhd = MHD_start_daemon(
            flags, 0, NULL, NULL, handle, l, MHD_OPTION_LISTEN_SOCKET, l->fd,
            MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
            MHD_OPTION_CONNECTION_TIMEOUT, 60u, MHD_OPTION_NOTIFY_COMPLETED,
            completed, l, MHD_OPTION_NOTIFY_CONNECTION, notify_connection, l,
            MHD_OPTION_HTTPS_MEM_KEY, l->key, MHD_OPTION_HTTPS_MEM_CERT,
            l->cert, MHD_OPTION_END);
    else
        l->mhd = MHD_start_daemon(
            flags, 0, NULL, NULL, handle, l, MHD_OPTION_LISTEN_SOCKET, l->fd,
            MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
            MHD_OPTION_CONNECTION_TIMEOUT, 60u, MHD_OPTION_NOTIFY_COMPLETED,
            completed, l, MHD_OPTION_NOTIFY_CONNECTION, notify_connection, l,
            MHD_OPTION_END);
    if (!l->mhd)
        return gp_diag_set(diag, GP_EIO, l->unix_socket ? "socket" : "listen",
                           "the HTTP server did not start%s",
                           l->tls ? " (check the TLS key and certificate)"
                                  : "");
    return GP_OK;
}

int gp_http_start(struct gp_http **out, const struct gp_http_options *o,
                  struct gp_diag *diag)
{
    struct gp_http *h = calloc(1, sizeof(*h));
    int rc;

    if (!h)
        return gp_diag_set(diag, GP_ENOMEM, "http", "out of memory");
    h->o = *o;
    h->lunix.fd = h->ltcp.fd = -1;
    h->lunix.h = h->ltcp.h = h;
    pthread_mutex_init(&h->mu, NULL);
    if ((o->socket_path && !(h->socket_path = strdup(o->socket_path))) ||
        (o->tokens_file && !(h->tokens_file = strdup(o->tokens_file)))) {
        rc = gp_diag_set(diag, GP_ENOMEM, "http", "out of memory");
        goto fail;
    }
    h->o.socket_path = h->socket_path;
    h->o.tokens_file = h->tokens_file;
    if ((rc = gp_auth_tokens_load(h->tokens_file, &h->tokens, &h->ntokens,
                                  diag)))
        goto fail;
    if (h->socket_path) {
        if ((rc = unix_listen(h->socket_path, &h->lunix.fd, diag)) != GP_OK)
            goto fail;
        h->lunix.unix_socket = true;
        if ((rc = start_listener(&h->lunix, diag)) != GP_OK)
            goto fail;
    }
    if (o->listen && *o->listen) {
        if (!(o->tls_cert && *o->tls_cert && o->tls_key && *o->tls_key) &&
            !o->allow_plain) {
            rc = gp_diag_set(diag, GP_EINVAL, o->listen,
                             "TCP needs server.tls_cert and server.tls_key "
                             "(or server.tls = off, on a loopback address "
                             "only)");
            goto fail;
        }
        if (o->tls_cert && *o->tls_cert && o->tls_key && *o->tls_key) {
            if ((rc = read_pem(o->tls_cert, &h->ltcp.cert, diag)) ||
                (rc = read_pem(o->tls_key, &h->ltcp.key, diag)))
                goto fail;
            h->ltcp.tls = true;
        }
        if ((rc = tcp_listen(o->listen, !h->ltcp.tls, &h->ltcp.fd, diag)) !=
                GP_OK ||
            (rc = start_listener(&h->ltcp, diag)) != GP_OK)
            goto fail;
    }
    *out = h;
    return GP_OK;
fail:
    gp_http_stop(h);
    return rc;
}

static void stop_listener(struct listener *l)
{
    if (l->mhd)
        MHD_stop_daemon(l->mhd);
    if (l->fd >= 0)
        close(l->fd);
    while (l->spare) {
        struct conn *cn = l->spare;

        l->spare = (struct conn *)cn->req.next;
        free(cn);
    }
    l->nspare = 0;
    free(l->cert);
    free(l->key);
    l->mhd = NULL;
    l->fd = -1;
}

void gp_http_stop(struct gp_http *h)
{
    struct gp_http_request *r;
    static const char busy[] = "{\"error\":\"STATE\",\"message\":\"the daemon "
                               "is shutting down\"}\n";

    if (!h)
        return;
    pthread_mutex_lock(&h->mu);
    h->stopping = true;
    pthread_mutex_unlock(&h->mu);
    while ((r = gp_http_take(h)))
        gp_http_reply(h, r, 503, "application/json", busy, sizeof(busy) - 1);
    stop_listener(&h->lunix);
    stop_listener(&h->ltcp);
    if (h->socket_path)
        unlink(h->socket_path);
    free(h->socket_path);
    free(h->tokens_file);
    free(h->tokens);
    pthread_mutex_destroy(&h->mu);
    free(h);
}

const char *gp_http_arg(const struct gp_http_request *r, const char *key)
{
    for (size_t i = 0; i < r->nargs; i++)
        if (strcmp(r->args[i].key, key) == 0)
            return r->args[i].value;
    return NULL;
}
