/* client.c - HTTP/JSON requests to the daemon with libcurl (client.h). */
#include "cli/client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#define MAX_REPLY (64u << 20)

static int exists_socket(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

int gp_client_init(struct gp_client *c, const char *socket_arg)
{
    const char *env;
    char cand[2][sizeof(c->socket)];
    size_t n = 0;

    memset(c, 0, sizeof(*c));
    if (socket_arg && *socket_arg) {
        snprintf(c->socket, sizeof(c->socket), "%s", socket_arg);
        return 0;
    }
    if ((env = getenv("GPUPOOL_SOCKET")) && *env) {
        snprintf(c->socket, sizeof(c->socket), "%s", env);
        return 0;
    }
    if ((env = getenv("GPUPOOL_URL")) && *env) {
        const char *tok = getenv("GPUPOOL_TOKEN");

        snprintf(c->url, sizeof(c->url), "%s", env);
        n = strlen(c->url);
        while (n > 0 && c->url[n - 1] == '/')
            c->url[--n] = '\0';
        if (tok)
            snprintf(c->token, sizeof(c->token), "%s", tok);
        return 0;
    }
    if ((env = getenv("XDG_STATE_HOME")) && *env)
        snprintf(cand[n++], sizeof(cand[0]), "%s/gpupool/gpupool.sock", env);
    else if ((env = getenv("HOME")) && *env)
        snprintf(cand[n++], sizeof(cand[0]),
                 "%s/.local/state/gpupool/gpupool.sock", env);
    snprintf(cand[n++], sizeof(cand[0]), "/var/lib/gpupool/gpupool.sock");
    for (size_t i = 0; i < n; i++)
        if (exists_socket(cand[i])) {
            memcpy(c->socket, cand[i], sizeof(c->socket));
            return 0;
        }
    fprintf(stderr,
            "gpupool: no daemon found (looked for %s%s%s); start one with "
            "`gpupool serve`, or say where it is with --socket or "
            "GPUPOOL_SOCKET\n",
            cand[0], n > 1 ? " and " : "", n > 1 ? cand[1] : "");
    return 1;
}

struct buf {
    char *p;
    size_t n;
    int over;
};

static size_t on_data(char *d, size_t size, size_t nmemb, void *priv)
{
    struct buf *b = priv;
    size_t len = size * nmemb;
    char *p;

    if (b->n + len > MAX_REPLY) {
        b->over = 1;
        return 0;
    }
    if (!(p = realloc(b->p, b->n + len + 1)))
        return 0;
    memcpy(p + b->n, d, len);
    b->p = p;
    b->n += len;
    b->p[b->n] = '\0';
    return len;
}

int gp_client_call(const struct gp_client *c, const char *method,
                   const char *path, json_t *body, long *status, json_t **reply,
                   char **raw)
{
    CURL *h;
    CURLcode rc;
    struct curl_slist *hdr = NULL;
    struct buf b = {0};
    char url[1024], auth[300], *text = NULL;
    const char *cacert;
    int ret = 1;

    *reply = NULL;
    if (raw)
        *raw = NULL;
    if (!(h = curl_easy_init())) {
        fprintf(stderr, "gpupool: cannot set up an HTTP client\n");
        return 1;
    }
    if (c->socket[0]) {
        curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->socket);
        snprintf(url, sizeof(url), "http://localhost%s", path);
    } else {
        snprintf(url, sizeof(url), "%s%s", c->url, path);
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 120L);
    /* a daemon whose certificate no system CA signed (self-signed) */
    if (!c->socket[0] && (cacert = getenv("GPUPOOL_CACERT")) && *cacert)
        curl_easy_setopt(h, CURLOPT_CAINFO, cacert);
    if (c->token[0]) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", c->token);
        hdr = curl_slist_append(hdr, auth);
    }
    if (body) {
        if (!(text = json_dumps(body, JSON_COMPACT))) {
            fprintf(stderr, "gpupool: out of memory\n");
            goto out;
        }
        hdr = curl_slist_append(hdr, "Content-Type: application/json");
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, text);
    }
    if (hdr)
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    if ((rc = curl_easy_perform(h)) != CURLE_OK) {
        if (b.over)
            fprintf(stderr, "gpupool: the daemon's answer is over %u MiB\n",
                    MAX_REPLY >> 20);
        else
            fprintf(stderr, "gpupool: cannot reach the daemon at %s: %s\n",
                    c->socket[0] ? c->socket : c->url, curl_easy_strerror(rc));
        goto out;
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    if (b.p)
        *reply = json_loads(b.p, 0, NULL);
    if (!*reply && raw) {
        *raw = b.p;
        b.p = NULL;
    }
    ret = 0;
out:
    free(text);
    free(b.p);
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    return ret;
}

int gp_client_fail(const char *what, long status, json_t *reply)
{
    const char *msg = json_string_value(json_object_get(reply, "message"));
    const char *err = json_string_value(json_object_get(reply, "error"));

    fprintf(stderr, "gpupool %s: %s (%s, HTTP %ld)\n", what,
            msg ? msg : "the daemon refused", err ? err : "?", status);
    return 1;
}
