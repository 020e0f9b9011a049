/* client.h - how the gpupool command talks to `gpupool serve`: HTTP/JSON
 * over the daemon's Unix socket (or TCP with a bearer token).
 *
 * Where the daemon is: --socket PATH, else $GPUPOOL_SOCKET, else
 * $GPUPOOL_URL (http(s)://host:port, with $GPUPOOL_TOKEN, and
 * $GPUPOOL_CACERT for a certificate no system CA signed), else the first
 * socket that exists of $XDG_STATE_HOME/gpupool/gpupool.sock (or
 * ~/.local/state/gpupool/gpupool.sock) and /var/lib/gpupool/gpupool.sock.
 */
#ifndef GPUPOOL_CLI_CLIENT_H
#define GPUPOOL_CLI_CLIENT_H

#include <jansson.h>

struct gp_client {
    char socket[512]; /* "" when url is used */
    char url[512];    /* base URL for TCP; "" for the socket */
    char token[256];
};

/* Find the daemon (see above); `socket_arg` is --socket or NULL. Returns
 * 0, or 1 after printing why no daemon can be found. */
int gp_client_init(struct gp_client *c, const char *socket_arg);
/* One request. `body` may be NULL. On a reply, *status is the HTTP status
 * and *reply the parsed JSON (the caller frees it; NULL for a body that is
 * not JSON, *raw then holds it, malloc'd). Returns 0, or 1 after printing
 * why the daemon could not be reached. */
int gp_client_call(const struct gp_client *c, const char *method,
                   const char *path, json_t *body, long *status, json_t **reply,
                   char **raw);
/* Print an error reply as "gpupool: MESSAGE (ERROR)" and return the exit
 * status for it: 1. */
int gp_client_fail(const char *what, long status, json_t *reply);

#endif
