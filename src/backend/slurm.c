/* slurm.c - gpupool's client of a Slurm cluster, through Slurm's commands
 * (slurm.h). */
#define _GNU_SOURCE /* pipe2, vasprintf */
#include "backend/slurm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

extern char **environ;

/* What a command may print: squeue --json is ~3 KiB a job. */
#define OUT_MAX (256u << 20)
#define ERR_MAX 4096u
#define HOSTLIST_MAX 65536u

struct gp_slurm {
    char bin_dir[1024];
    uint32_t timeout_ms;
    char version[32];
};

/* ---- running a command -------------------------------------------------- */

struct buf {
    char *p;
    size_t len, cap, max;
    bool cut;
};

static int buf_add(struct buf *b, const char *s, size_t n)
{
    if (b->len + n > b->max) {
        n = b->max - b->len;
        b->cut = true;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return GP_ENOMEM;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return GP_OK;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "scontrol update JobId=7 ..." for diags, cut to fit */
static void argv_str(const char *const *argv, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; argv[i] && o + 1 < len; i++) {
        int k = snprintf(buf + o, len - o, "%s%s", i ? " " : "", argv[i]);
        if (k < 0)
            break;
        o += (size_t)k;
    }
    if (o >= len && len > 4)
        memcpy(buf + len - 4, "...", 4);
}

/* The last line of stderr that says something, for a diag. */
static const char *err_line(const struct buf *e, char *line, size_t len)
{
    const char *s = e->p ? e->p : "";
    const char *end = s + strlen(s);
    while (end > s && (end[-1] == '\n' || end[-1] == ' '))
        end--;
    const char *start = end;
    while (start > s && start[-1] != '\n')
        start--;
    size_t n = (size_t)(end - start);
    if (n >= len)
        n = len - 1;
    memcpy(line, start, n);
    line[n] = '\0';
    return line;
}

/* argv[0] run with envp as its environment; see gp_slurm_run */
static int run_env(struct gp_slurm *s, const char *const *argv, const char *in,
                   char *const *envp, char **out, size_t *out_len,
                   struct gp_diag *diag)
{
    char cmd[200], path[1200], line[240];
    int po[2] = {-1, -1}, pe[2] = {-1, -1}, pi[2] = {-1, -1};
    struct buf bo = {.max = OUT_MAX}, be = {.max = ERR_MAX};
    posix_spawn_file_actions_t fa;
    pid_t pid = -1;
    int rc = GP_OK, status = 0;
    bool timed_out = false;

    argv_str(argv, cmd, sizeof(cmd));
    if (s->bin_dir[0])
        snprintf(path, sizeof(path), "%s/%s", s->bin_dir, argv[0]);
    else
        snprintf(path, sizeof(path), "%s", argv[0]);
    if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0 ||
        (in && pipe2(pi, O_CLOEXEC) != 0)) {
        rc = gp_diag_set(diag, GP_EIO, cmd, "pipe: %s", strerror(errno));
        goto out;
    }
    posix_spawn_file_actions_init(&fa);
    if (in)
        posix_spawn_file_actions_adddup2(&fa, pi[0], 0);
    else
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, po[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
    char *const *av; /* posix_spawn's type; it writes nothing through it */
    memcpy(&av, &argv, sizeof(av));
    int e = s->bin_dir[0] ? posix_spawn(&pid, path, &fa, NULL, av, envp)
                          : posix_spawnp(&pid, path, &fa, NULL, av, envp);
    posix_spawn_file_actions_destroy(&fa);
    if (e != 0) {
        pid = -1;
        rc = gp_diag_set(diag, GP_EIO, cmd, "cannot run %s: %s", path,
                         strerror(e));
        goto out;
    }
    close(po[1]);
    close(pe[1]);
    po[1] = pe[1] = -1;
    if (in) {
        close(pi[0]);
        pi[0] = -1;
        fcntl(pi[1], F_SETFL, O_NONBLOCK);
    }

    size_t in_off = 0, in_len = in ? strlen(in) : 0;
    int64_t deadline = mono_ms() + s->timeout_ms;
    while (po[0] >= 0 || pe[0] >= 0) {
        struct pollfd fds[3];
        int nf = 0, io = -1, ie = -1, ii = -1;
        if (po[0] >= 0)
            io = nf, fds[nf++] = (struct pollfd){po[0], POLLIN, 0};
        if (pe[0] >= 0)
            ie = nf, fds[nf++] = (struct pollfd){pe[0], POLLIN, 0};
        if (pi[1] >= 0)
            ii = nf, fds[nf++] = (struct pollfd){pi[1], POLLOUT, 0};
        int64_t left = deadline - mono_ms();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        int k = poll(fds, (nfds_t)nf, (int)left);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            rc = gp_diag_set(diag, GP_EIO, cmd, "poll: %s", strerror(errno));
            break;
        }
        if (ii >= 0 && fds[ii].revents) {
            ssize_t w = write(pi[1], in + in_off, in_len - in_off);
            if (w > 0)
                in_off += (size_t)w;
            if (w < 0 && errno != EAGAIN && errno != EINTR)
                in_off = in_len; /* it stopped reading: let it say why */
            if (in_off == in_len) {
                close(pi[1]);
                pi[1] = -1;
            }
        }
        int *fdp[2] = {&po[0], &pe[0]};
        struct buf *bp[2] = {&bo, &be};
        int idx[2] = {io, ie};
        for (int t = 0; t < 2; t++) {
            if (idx[t] < 0 || !fds[idx[t]].revents)
                continue;
            char chunk[65536];
            ssize_t r = read(*fdp[t], chunk, sizeof(chunk));
            if (r < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (r <= 0) {
                close(*fdp[t]);
                *fdp[t] = -1;
            } else if (buf_add(bp[t], chunk, (size_t)r) != GP_OK) {
                rc = gp_diag_set(diag, GP_ENOMEM, cmd, "out of memory");
            }
        }
        if (rc != GP_OK)
            break;
    }
    if (timed_out || rc != GP_OK)
        kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    pid = -1;
    if (rc != GP_OK)
        goto out;
    if (timed_out) {
        rc = gp_diag_set(diag, GP_EIO, cmd, "no answer within %u ms",
                         s->timeout_ms);
    } else if (WIFSIGNALED(status)) {
        rc = gp_diag_set(diag, GP_EIO, cmd, "killed by signal %d: %s",
                         WTERMSIG(status), err_line(&be, line, sizeof(line)));
    } else if (WEXITSTATUS(status) != 0) {
        rc = gp_diag_set(diag, GP_EIO, cmd, "exit %d: %s", WEXITSTATUS(status),
                         err_line(&be, line, sizeof(line)));
    } else if (bo.cut) {
        rc =
            gp_diag_set(diag, GP_ERANGE, cmd, "printed over %u bytes", OUT_MAX);
    }
out:
    for (int i = 0; i < 2; i++) {
        if (po[i] >= 0)
            close(po[i]);
        if (pe[i] >= 0)
            close(pe[i]);
        if (pi[i] >= 0)
            close(pi[i]);
    }
    free(be.p);
    if (rc == GP_OK && out) {
        if (!bo.p && !(bo.p = strdup("")))
            return gp_diag_set(diag, GP_ENOMEM, cmd, "out of memory");
        *out = bo.p;
        if (out_len)
            *out_len = bo.len;
    } else {
        free(bo.p);
    }
    return rc;
}

int gp_slurm_run(struct gp_slurm *s, const char *const *argv, const char *in,
                 char **out, size_t *out_len, struct gp_diag *diag)
{
    return run_env(s, argv, in, environ, out, out_len, diag);
}

int gp_slurm_open(struct gp_slurm **out, const struct gp_slurm_options *o,
                  struct gp_diag *diag)
{
    struct gp_slurm *s = calloc(1, sizeof(*s));
    char *text = NULL;
    int rc;
    if (!s)
        return gp_diag_set(diag, GP_ENOMEM, "slurm", "out of memory");
    if (o && o->bin_dir) {
        if (strlen(o->bin_dir) >= sizeof(s->bin_dir)) {
            free(s);
            return gp_diag_set(diag, GP_EINVAL, "slurm", "bin_dir too long");
        }
        snprintf(s->bin_dir, sizeof(s->bin_dir), "%s", o->bin_dir);
    }
    s->timeout_ms = o && o->timeout_ms ? o->timeout_ms : 10000;
    const char *ver[] = {"sinfo", "--version", NULL};
    if ((rc = gp_slurm_run(s, ver, NULL, &text, NULL, diag)) != GP_OK)
        goto fail;
    /* "slurm-wlm 22.05.8" or "slurm 23.02.1" */
    const char *sp = strrchr(text, ' ');
    snprintf(s->version, sizeof(s->version), "%s", sp ? sp + 1 : text);
    s->version[strcspn(s->version, "\n")] = '\0';
    free(text);
    text = NULL;
    const char *ping[] = {"scontrol", "ping", NULL};
    if ((rc = gp_slurm_run(s, ping, NULL, &text, NULL, diag)) != GP_OK)
        goto fail;
    if (!strstr(text, "is UP")) {
        char line[200];
        struct buf b = {.p = text};
        rc = gp_diag_set(diag, GP_EIO, "scontrol ping",
                         "the controller is not up: %s",
                         err_line(&b, line, sizeof(line)));
        goto fail;
    }
    free(text);
    *out = s;
    return GP_OK;
fail:
    free(text);
    free(s);
    return rc;
}

void gp_slurm_close(struct gp_slurm *s)
{
    free(s);
}

const char *gp_slurm_version(const struct gp_slurm *s)
{
    return s->version;
}

/* ---- hostlists, GRES ---------------------------------------------------- */

/* One bracket body "1-3,07-09" against prefix and suffix. */
static int expand_range(const char *prefix, size_t plen, const char *body,
                        size_t blen, const char *suffix, size_t slen,
                        int (*fn)(void *, const char *), void *priv,
                        unsigned *count, const char *where,
                        struct gp_diag *diag)
{
    const char *p = body, *end = body + blen;
    if (blen == 0)
        return gp_diag_set(diag, GP_EPARSE, where, "empty brackets");
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *q = comma ? comma : end;
        const char *dash = memchr(p, '-', (size_t)(q - p));
        const char *lo_end = dash ? dash : q;
        size_t width = (size_t)(lo_end - p);
        char *e1, *e2;
        char tmp[32];
        if (width == 0 || width >= sizeof(tmp) ||
            (dash && (size_t)(q - dash - 1) >= sizeof(tmp)))
            return gp_diag_set(diag, GP_EPARSE, where, "bad range '%.*s'",
                               (int)(q - p), p);
        memcpy(tmp, p, width);
        tmp[width] = '\0';
        unsigned long lo = strtoul(tmp, &e1, 10), hi = lo;
        if (*e1)
            return gp_diag_set(diag, GP_EPARSE, where, "bad range '%.*s'",
                               (int)(q - p), p);
        if (dash) {
            size_t w2 = (size_t)(q - dash - 1);
            memcpy(tmp, dash + 1, w2);
            tmp[w2] = '\0';
            hi = strtoul(tmp, &e2, 10);
            if (!w2 || *e2 || hi < lo)
                return gp_diag_set(diag, GP_EPARSE, where, "bad range '%.*s'",
                                   (int)(q - p), p);
        }
        if (hi - lo + 1 > HOSTLIST_MAX - *count)
            return gp_diag_set(diag, GP_EPARSE, where, "more than %u names",
                               HOSTLIST_MAX);
        for (unsigned long v = lo; v <= hi; v++) {
            char name[GP_SLURM_NAME_MAX * 2];
            int k = snprintf(name, sizeof(name), "%.*s%0*lu%.*s", (int)plen,
                             prefix, (int)width, v, (int)slen, suffix);
            if (k < 0 || (size_t)k >= sizeof(name))
                return gp_diag_set(diag, GP_EPARSE, where, "name too long");
            int r = fn(priv, name);
            if (r)
                return r;
            (*count)++;
        }
        p = comma ? comma + 1 : end;
    }
    return GP_OK;
}

int gp_hostlist_expand(const char *list, int (*fn)(void *priv, const char *n),
                       void *priv, struct gp_diag *diag)
{
    const char *where = "hostlist";
    unsigned count = 0;
    const char *p = list;
    while (*p) {
        /* one item: up to a comma outside brackets */
        const char *q = p, *open = NULL, *close = NULL;
        int depth = 0;
        for (; *q && !(*q == ',' && depth == 0); q++) {
            if (*q == '[') {
                if (depth++ || open)
                    return gp_diag_set(diag, GP_EPARSE, where,
                                       "'%s': one bracket per name", list);
                open = q;
            } else if (*q == ']') {
                if (--depth < 0)
                    return gp_diag_set(diag, GP_EPARSE, where,
                                       "'%s': unbalanced ']'", list);
                close = q;
            }
        }
        if (depth)
            return gp_diag_set(diag, GP_EPARSE, where, "'%s': unbalanced '['",
                               list);
        if (q == p)
            return gp_diag_set(diag, GP_EPARSE, where, "'%s': empty name",
                               list);
        int r;
        if (!open) {
            char name[GP_SLURM_NAME_MAX * 2];
            if ((size_t)(q - p) >= sizeof(name))
                return gp_diag_set(diag, GP_EPARSE, where, "name too long");
            memcpy(name, p, (size_t)(q - p));
            name[q - p] = '\0';
            if (++count > HOSTLIST_MAX)
                return gp_diag_set(diag, GP_EPARSE, where, "more than %u names",
                                   HOSTLIST_MAX);
            r = fn(priv, name);
        } else {
            r = expand_range(p, (size_t)(open - p), open + 1,
                             (size_t)(close - open - 1), close + 1,
                             (size_t)(q - close - 1), fn, priv, &count, where,
                             diag);
        }
        if (r)
            return r;
        p = *q ? q + 1 : q;
    }
    return GP_OK;
}

int gp_slurm_parse_gres(const char *s, uint32_t *gpus, char *type,
                        size_t type_len)
{
    uint64_t total = 0;
    if (type_len)
        type[0] = '\0';
    while (s && *s) {
        const char *end = s + strcspn(s, ",");
        /* drop "(S:0-1)" and "(IDX:0-1)" */
        const char *paren = memchr(s, '(', (size_t)(end - s));
        if (paren) {
            const char *cl = strchr(paren, ')');
            if (cl && cl >= end)
                end = cl + strcspn(cl, ",");
        }
        const char *item_end = paren && paren < end ? paren : end;
        char item[160];
        size_t n = (size_t)(item_end - s);
        if (n >= sizeof(item))
            return GP_EPARSE;
        memcpy(item, s, n);
        item[n] = '\0';
        /* "gres:gpu:2" and "gres/gpu=2" name the same */
        char *it = item;
        if (!strncmp(it, "gres:", 5) || !strncmp(it, "gres/", 5))
            it += 5;
        for (char *c = it; *c; c++)
            if (*c == '=')
                *c = ':';
        char *f[4] = {0};
        int nf = 0;
        for (char *tok = it; tok && nf < 4;) {
            f[nf++] = tok;
            char *c = strchr(tok, ':');
            if (c)
                *c = '\0';
            tok = c ? c + 1 : NULL;
        }
        if (nf >= 1 && !strcmp(f[0], "gpu")) {
            const char *num = nf == 3 ? f[2] : nf == 2 ? f[1] : "1";
            const char *ty = nf == 3 ? f[1] : "";
            char *e;
            unsigned long v = strtoul(num, &e, 10);
            if (nf == 2 && *e) { /* "gpu:v100": one typed GPU */
                ty = f[1];
                v = 1;
            } else if (*e || e == num) {
                return GP_EPARSE;
            }
            total += v;
            if (type_len && !type[0] && *ty)
                snprintf(type, type_len, "%s", ty);
        }
        s = *end ? end + 1 : end;
    }
    if (total > UINT32_MAX)
        return GP_ERANGE;
    *gpus = (uint32_t)total;
    return GP_OK;
}

/* ---- JSON --------------------------------------------------------------- */

static void copy_str(char *dst, size_t len, json_t *v)
{
    const char *s = json_is_string(v) ? json_string_value(v) : "";
    snprintf(dst, len, "%s", s);
}

static int64_t get_int(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (json_is_integer(v))
        return json_integer_value(v);
    if (json_is_real(v))
        return (int64_t)json_real_value(v);
    return 0;
}

/* The list under key in a command's JSON, or its "errors". */
static int load_list(const char *json, size_t len, const char *where,
                     const char *key, json_t **root, json_t **list,
                     struct gp_diag *diag)
{
    json_error_t je;
    *root = json_loadb(json, len, 0, &je);
    if (!*root)
        return gp_diag_set(diag, GP_EPARSE, where, "line %d: %s", je.line,
                           je.text);
    json_t *errs = json_object_get(*root, "errors");
    if (json_is_array(errs) && json_array_size(errs) > 0) {
        json_t *e0 = json_array_get(errs, 0);
        const char *m = json_string_value(json_object_get(e0, "error"));
        int rc = gp_diag_set(diag, GP_EIO, where, "Slurm says: %s",
                             m ? m : "an error");
        json_decref(*root);
        return rc;
    }
    *list = json_object_get(*root, key);
    if (!json_is_array(*list)) {
        json_decref(*root);
        return gp_diag_set(diag, GP_EPARSE, where, "no '%s' list", key);
    }
    return GP_OK;
}

static enum gp_slurm_avail avail_of(const char *state, json_t *flags)
{
    /* "idle", "mixed", "allocated", "down", "drained", "draining",
     * "future", "unknown"; flags say DRAIN, NOT_RESPONDING, ... */
    bool drain = strstr(state, "drain") != NULL;
    bool down = !strcmp(state, "down") || !strcmp(state, "future") ||
                !strcmp(state, "unknown") || !strcmp(state, "error") ||
                !strcmp(state, "fail") || !strcmp(state, "failing");
    size_t i;
    json_t *f;
    json_array_foreach(flags, i, f)
    {
        const char *s = json_string_value(f);
        if (!s)
            continue;
        if (!strcmp(s, "DRAIN") || !strcmp(s, "DRAINING") ||
            !strcmp(s, "DRAINED"))
            drain = true;
        if (!strcmp(s, "NOT_RESPONDING") || !strcmp(s, "FAIL") ||
            !strcmp(s, "POWERED_DOWN") || !strcmp(s, "POWERING_DOWN") ||
            !strcmp(s, "REBOOT_REQUESTED") || !strcmp(s, "REBOOT_ISSUED"))
            down = true;
    }
    return down ? GP_SLURM_DOWN : drain ? GP_SLURM_DRAIN : GP_SLURM_UP;
}

/* One element of a command's list into *elem; an error names it. */
typedef int (*elem_fn)(json_t *o, void *elem, const char *where, size_t i,
                       struct gp_diag *diag);

/* The list under key, element by element, into a calloc'd array. */
static int parse_list(const char *json, size_t len, const char *where,
                      const char *key, size_t size, elem_fn fn, void **out,
                      size_t *n, struct gp_diag *diag)
{
    json_t *root, *list, *o;
    int rc = load_list(json, len, where, key, &root, &list, diag);
    if (rc != GP_OK)
        return rc;
    size_t cnt = json_array_size(list), i;
    char *v = calloc(cnt ? cnt : 1, size);
    if (!v) {
        json_decref(root);
        return gp_diag_set(diag, GP_ENOMEM, where, "out of memory");
    }
    json_array_foreach(list, i, o)
    {
        if ((rc = fn(o, v + i * size, where, i, diag)) != GP_OK)
            break;
    }
    json_decref(root);
    if (rc != GP_OK) {
        free(v);
        return rc;
    }
    *out = v;
    *n = cnt;
    return GP_OK;
}

static int parse_node(json_t *o, void *elem, const char *where, size_t i,
                      struct gp_diag *diag)
{
    struct gp_slurm_node *nd = elem;
    const char *name = json_string_value(json_object_get(o, "name"));
    if (!name || !*name || strlen(name) >= sizeof(nd->name))
        return gp_diag_set(diag, GP_EPARSE, where, "nodes[%zu]: no usable name",
                           i);
    snprintf(nd->name, sizeof(nd->name), "%s", name);
    char st[64];
    copy_str(st, sizeof(st), json_object_get(o, "state"));
    json_t *flags = json_object_get(o, "state_flags"), *f;
    snprintf(nd->state, sizeof(nd->state), "%s", st);
    size_t k;
    json_array_foreach(flags, k, f)
    {
        size_t l = strlen(nd->state);
        const char *fs = json_string_value(f);
        if (fs && l + strlen(fs) + 2 < sizeof(nd->state))
            snprintf(nd->state + l, sizeof(nd->state) - l, "+%s", fs);
    }
    nd->avail = avail_of(st, flags);
    int64_t c = get_int(o, "cpus");
    int64_t m = get_int(o, "real_memory");
    nd->cpus = c > 0 && c < UINT32_MAX ? (uint32_t)c : 0;
    nd->mem_mib = m > 0 ? (uint64_t)m : 0;
    const char *gres = json_string_value(json_object_get(o, "gres"));
    const char *used = json_string_value(json_object_get(o, "gres_used"));
    char dummy[GP_SLURM_TYPE_MAX];
    if (gp_slurm_parse_gres(gres, &nd->gpus, nd->gpu_type,
                            sizeof(nd->gpu_type)) != GP_OK ||
        gp_slurm_parse_gres(used, &nd->gpus_used, dummy, sizeof(dummy)) !=
            GP_OK)
        return gp_diag_set(diag, GP_EPARSE, where,
                           "node %s: GRES '%s' / '%s' do not parse", nd->name,
                           gres ? gres : "", used ? used : "");
    copy_str(nd->reason, sizeof(nd->reason), json_object_get(o, "reason"));
    return GP_OK;
}

int gp_slurm_parse_nodes(const char *json, size_t len, const char *where,
                         struct gp_slurm_node **out, size_t *n,
                         struct gp_diag *diag)
{
    void *v = NULL;
    int rc = parse_list(json, len, where, "nodes", sizeof(**out), parse_node,
                        &v, n, diag);
    if (rc == GP_OK)
        *out = v;
    return rc;
}

static const struct {
    const char *name;
    enum gp_slurm_jstate st;
} jstates[] = {
    {"PENDING", GP_SJ_PENDING},       {"REQUEUED", GP_SJ_PENDING},
    {"REQUEUE_HOLD", GP_SJ_PENDING},  {"REQUEUE_FED", GP_SJ_PENDING},
    {"RESV_DEL_HOLD", GP_SJ_PENDING}, {"RUNNING", GP_SJ_RUNNING},
    {"CONFIGURING", GP_SJ_RUNNING},   {"COMPLETING", GP_SJ_RUNNING},
    {"RESIZING", GP_SJ_RUNNING},      {"SIGNALING", GP_SJ_RUNNING},
    {"STAGE_OUT", GP_SJ_RUNNING},     {"SUSPENDED", GP_SJ_SUSPENDED},
    {"STOPPED", GP_SJ_SUSPENDED},     {"COMPLETED", GP_SJ_COMPLETED},
    {"FAILED", GP_SJ_FAILED},         {"OUT_OF_MEMORY", GP_SJ_FAILED},
    {"BOOT_FAIL", GP_SJ_FAILED},      {"CANCELLED", GP_SJ_CANCELLED},
    {"REVOKED", GP_SJ_CANCELLED},     {"SPECIAL_EXIT", GP_SJ_FAILED},
    {"TIMEOUT", GP_SJ_TIMEOUT},       {"DEADLINE", GP_SJ_TIMEOUT},
    {"NODE_FAIL", GP_SJ_NODE_FAIL},   {"PREEMPTED", GP_SJ_PREEMPTED},
};

static const char *const jstate_names[] = {
    [GP_SJ_PENDING] = "pending",     [GP_SJ_RUNNING] = "running",
    [GP_SJ_SUSPENDED] = "suspended", [GP_SJ_COMPLETED] = "completed",
    [GP_SJ_FAILED] = "failed",       [GP_SJ_CANCELLED] = "cancelled",
    [GP_SJ_TIMEOUT] = "timeout",     [GP_SJ_NODE_FAIL] = "node_fail",
    [GP_SJ_PREEMPTED] = "preempted", [GP_SJ_OTHER] = "other",
};

const char *gp_slurm_jstate_name(enum gp_slurm_jstate s)
{
    return (unsigned)s <= GP_SJ_OTHER ? jstate_names[s] : "other";
}

bool gp_slurm_jstate_final(enum gp_slurm_jstate s)
{
    return s != GP_SJ_PENDING && s != GP_SJ_RUNNING && s != GP_SJ_SUSPENDED &&
           s != GP_SJ_OTHER;
}

const char *gp_slurm_avail_name(enum gp_slurm_avail a)
{
    return a == GP_SLURM_UP ? "up" : a == GP_SLURM_DRAIN ? "drain" : "down";
}

static int parse_job(json_t *o, void *elem, const char *where, size_t i,
                     struct gp_diag *diag)
{
    struct gp_slurm_job *j = elem;
    int64_t id = get_int(o, "job_id");
    if (id <= 0 || id > UINT32_MAX)
        return gp_diag_set(diag, GP_EPARSE, where, "jobs[%zu]: no job_id", i);
    j->id = (uint32_t)id;
    copy_str(j->state_name, sizeof(j->state_name),
             json_object_get(o, "job_state"));
    j->state = GP_SJ_OTHER;
    for (size_t k = 0; k < sizeof(jstates) / sizeof(jstates[0]); k++)
        if (!strcmp(j->state_name, jstates[k].name))
            j->state = jstates[k].st;
    copy_str(j->reason, sizeof(j->reason), json_object_get(o, "state_reason"));
    j->held = j->state == GP_SJ_PENDING && get_int(o, "priority") == 0;
    copy_str(j->name, sizeof(j->name), json_object_get(o, "name"));
    copy_str(j->account, sizeof(j->account), json_object_get(o, "account"));
    copy_str(j->user, sizeof(j->user), json_object_get(o, "user_name"));
    copy_str(j->partition, sizeof(j->partition),
             json_object_get(o, "partition"));
    copy_str(j->comment, sizeof(j->comment), json_object_get(o, "comment"));
    copy_str(j->nodes, sizeof(j->nodes), json_object_get(o, "nodes"));
    copy_str(j->req_nodes, sizeof(j->req_nodes),
             json_object_get(o, "required_nodes"));
    copy_str(j->batch_host, sizeof(j->batch_host),
             json_object_get(o, "batch_host"));
    j->uid = (uint32_t)get_int(o, "user_id");
    j->submit_s = get_int(o, "submit_time");
    j->start_s = get_int(o, "start_time");
    j->end_s = get_int(o, "end_time");
    int64_t nc = get_int(o, "node_count");
    j->node_count = nc > 0 && nc < UINT32_MAX ? (uint32_t)nc : 0;
    int64_t tl = get_int(o, "time_limit");
    j->time_limit_min = tl > 0 && tl < UINT32_MAX ? (uint32_t)tl : 0;
    int64_t rs = get_int(o, "restart_cnt");
    j->restarts = rs > 0 && rs < UINT32_MAX ? (uint32_t)rs : 0;
    j->exit_status = (int)get_int(o, "exit_code");
    const char *pn = json_string_value(json_object_get(o, "tres_per_node"));
    const char *pj = json_string_value(json_object_get(o, "tres_per_job"));
    char t2[GP_SLURM_TYPE_MAX];
    if (gp_slurm_parse_gres(pn, &j->gpus_per_node, j->gpu_type,
                            sizeof(j->gpu_type)) != GP_OK ||
        gp_slurm_parse_gres(pj, &j->gpus_per_job, t2, sizeof(t2)) != GP_OK)
        return gp_diag_set(diag, GP_EPARSE, where,
                           "job %u: GPUs '%s' / '%s' do not parse", j->id,
                           pn ? pn : "", pj ? pj : "");
    if (!j->gpu_type[0])
        snprintf(j->gpu_type, sizeof(j->gpu_type), "%s", t2);
    return GP_OK;
}

int gp_slurm_parse_jobs(const char *json, size_t len, const char *where,
                        struct gp_slurm_job **out, size_t *n,
                        struct gp_diag *diag)
{
    void *v = NULL;
    int rc = parse_list(json, len, where, "jobs", sizeof(**out), parse_job, &v,
                        n, diag);
    if (rc == GP_OK)
        *out = v;
    return rc;
}

/* ---- topology ----------------------------------------------------------- */

struct topo_ctx {
    struct gp_slurm_node *nodes;
    size_t n;
    const char *sw;
    long level;
    long *best; /* per node: the level of its leaf so far */
};

static int topo_node(void *priv, const char *name)
{
    struct topo_ctx *t = priv;
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(t->nodes[i].name, name))
            continue;
        if (t->best[i] < 0 || t->level < t->best[i]) {
            t->best[i] = t->level;
            snprintf(t->nodes[i].leaf, sizeof(t->nodes[i].leaf), "%s", t->sw);
        }
        break;
    }
    return 0;
}

/* "Key=value" on a line of words */
static bool field(const char *line, const char *key, char *val, size_t len)
{
    size_t kl = strlen(key);
    for (const char *p = line; *p;) {
        while (*p == ' ')
            p++;
        const char *end = p + strcspn(p, " ");
        if ((size_t)(end - p) > kl && !strncmp(p, key, kl) && p[kl] == '=') {
            size_t n = (size_t)(end - p) - kl - 1;
            if (n >= len)
                n = len - 1;
            memcpy(val, p + kl + 1, n);
            val[n] = '\0';
            return true;
        }
        p = end;
    }
    return false;
}

int gp_slurm_parse_topology(const char *text, const char *where,
                            struct gp_slurm_node *nodes, size_t n,
                            struct gp_diag *diag)
{
    long *best = malloc((n ? n : 1) * sizeof(*best));
    char line[8192];
    int rc = GP_OK;
    unsigned lineno = 0;
    if (!best)
        return gp_diag_set(diag, GP_ENOMEM, where, "out of memory");
    for (size_t i = 0; i < n; i++) {
        best[i] = -1;
        nodes[i].leaf[0] = '\0';
    }
    for (const char *p = text; *p && rc == GP_OK;) {
        size_t l = strcspn(p, "\n");
        lineno++;
        if (l >= sizeof(line)) {
            rc =
                gp_diag_set(diag, GP_EPARSE, where, "line %u too long", lineno);
            break;
        }
        memcpy(line, p, l);
        line[l] = '\0';
        p += l + (p[l] == '\n');
        char sw[GP_SLURM_NAME_MAX], lvl[16], list[4096];
        if (!field(line, "SwitchName", sw, sizeof(sw)))
            continue;
        if (!field(line, "Nodes", list, sizeof(list)))
            continue; /* a switch with switches only */
        char *e;
        long level =
            field(line, "Level", lvl, sizeof(lvl)) ? strtol(lvl, &e, 10) : 0;
        struct topo_ctx t = {nodes, n, sw, level, best};
        char w[64];
        snprintf(w, sizeof(w), "%s:%u", where, lineno);
        rc = gp_hostlist_expand(list, topo_node, &t, diag);
        if (rc != GP_OK && diag)
            snprintf(diag->where, sizeof(diag->where), "%s", w);
    }
    free(best);
    return rc;
}

/* ---- the job completion log --------------------------------------------- */

/* jobcomp/filetxt writes these keys in this order, "Key=value " each. A
 * value may hold spaces (a job name, a directory): it runs up to the next
 * key, not the next space. */
static const char *const comp_keys[] = {
    "JobId",        "UserId",          "GroupId",   "Name",
    "JobState",     "Partition",       "TimeLimit", "StartTime",
    "EndTime",      "NodeList",        "NodeCnt",   "ProcCnt",
    "WorkDir",      "ReservationName", "Tres",      "Account",
    "QOS",          "WcKey",           "Cluster",   "SubmitTime",
    "EligibleTime", "DerivedExitCode", "ExitCode",
};
enum { COMP_NKEYS = sizeof(comp_keys) / sizeof(comp_keys[0]) };

/* "2026-11-24T23:18:26" in local time; "unknown" and "None" are 0 */
static int comp_time(const char *v, int64_t *out)
{
    struct tm tm = {0};
    char *end;
    if (!strcmp(v, "unknown") || !strcmp(v, "None") || !*v) {
        *out = 0;
        return GP_OK;
    }
    end = strptime(v, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!end || *end)
        return GP_EPARSE;
    tm.tm_isdst = -1;
    time_t t = mktime(&tm);
    if (t == (time_t)-1)
        return GP_EPARSE;
    *out = (int64_t)t;
    return GP_OK;
}

static int comp_line(const char *line, struct gp_slurm_comp *c,
                     const char **bad)
{
    const char *pos[COMP_NKEYS];
    const char *p = line;
    char key[40];
    for (size_t k = 0; k < COMP_NKEYS; k++) {
        snprintf(key, sizeof(key), "%s%s=", k ? " " : "", comp_keys[k]);
        const char *at =
            k ? strstr(p, key) : (strncmp(p, key, strlen(key)) ? NULL : p);
        if (!at) {
            *bad = comp_keys[k];
            return GP_EPARSE;
        }
        pos[k] = at + strlen(key);
        p = pos[k];
    }
    char v[1024];
    memset(c, 0, sizeof(*c));
    for (size_t k = 0; k < COMP_NKEYS; k++) {
        const char *end = k + 1 < COMP_NKEYS
                              ? pos[k + 1] - strlen(comp_keys[k + 1]) - 2
                              : pos[k] + strlen(pos[k]);
        while (end > pos[k] && (end[-1] == ' ' || end[-1] == '\n'))
            end--;
        size_t n = (size_t)(end - pos[k]);
        if (n >= sizeof(v))
            n = sizeof(v) - 1;
        memcpy(v, pos[k], n);
        v[n] = '\0';
        const char *name = comp_keys[k];
        char *e;
        int rc = GP_OK;
        *bad = name;
        if (!strcmp(name, "JobId")) {
            unsigned long id = strtoul(v, &e, 10);
            if (*e || !id || id > UINT32_MAX)
                return GP_EPARSE;
            c->id = (uint32_t)id;
        } else if (!strcmp(name, "JobState")) {
            snprintf(c->state, sizeof(c->state), "%.23s", v);
        } else if (!strcmp(name, "StartTime")) {
            rc = comp_time(v, &c->start_s);
        } else if (!strcmp(name, "EndTime")) {
            rc = comp_time(v, &c->end_s);
        } else if (!strcmp(name, "NodeList")) {
            snprintf(c->nodes, sizeof(c->nodes), "%s",
                     strcmp(v, "(null)") ? v : "");
        } else if (!strcmp(name, "NodeCnt")) {
            unsigned long nc = strtoul(v, &e, 10);
            if (*e || nc > UINT32_MAX)
                return GP_EPARSE;
            c->node_count = (uint32_t)nc;
        } else if (!strcmp(name, "ExitCode")) {
            if (sscanf(v, "%d:%d", &c->exit_code, &c->exit_signal) != 2)
                return GP_EPARSE;
        }
        if (rc != GP_OK)
            return rc;
    }
    if (c->node_count == 0)
        c->start_s = 0; /* cancelled before it ran: no run */
    return GP_OK;
}

int gp_slurm_parse_jobcomp(const char *text, const char *where,
                           struct gp_slurm_comp **out, size_t *n,
                           struct gp_diag *diag)
{
    size_t cap = 16, cnt = 0;
    unsigned lineno = 0;
    struct gp_slurm_comp *v = malloc(cap * sizeof(*v));
    char *line = NULL;
    if (!v)
        return gp_diag_set(diag, GP_ENOMEM, where, "out of memory");
    for (const char *p = text; *p;) {
        size_t l = strcspn(p, "\n");
        lineno++;
        char *nl = realloc(line, l + 1);
        if (!nl)
            goto nomem;
        line = nl;
        memcpy(line, p, l);
        line[l] = '\0';
        p += l + (p[l] == '\n');
        if (!l)
            continue;
        if (cnt == cap) {
            struct gp_slurm_comp *nv = realloc(v, 2 * cap * sizeof(*v));
            if (!nv)
                goto nomem;
            v = nv;
            cap *= 2;
        }
        const char *bad = "";
        if (comp_line(line, &v[cnt], &bad) != GP_OK) {
            char w[200];
            snprintf(w, sizeof(w), "%s:%u", where, lineno);
            free(v);
            free(line);
            return gp_diag_set(diag, GP_EPARSE, w, "field %s missing or bad",
                               bad);
        }
        cnt++;
    }
    free(line);
    *out = v;
    *n = cnt;
    return GP_OK;
nomem:
    free(v);
    free(line);
    return gp_diag_set(diag, GP_ENOMEM, where, "out of memory");
}

/* ---- the calls ---------------------------------------------------------- */

int gp_slurm_nodes(struct gp_slurm *s, struct gp_slurm_node **out, size_t *n,
                   struct gp_diag *diag)
{
    const char *a[] = {"sinfo", "--json", NULL};
    const char *t[] = {"scontrol", "show", "topology", NULL};
    char *text = NULL;
    size_t len = 0;
    int rc = gp_slurm_run(s, a, NULL, &text, &len, diag);
    if (rc != GP_OK)
        return rc;
    rc = gp_slurm_parse_nodes(text, len, "sinfo --json", out, n, diag);
    free(text);
    if (rc != GP_OK)
        return rc;
    /* No topology plugin: scontrol says so on stderr and exits 0 with
     * nothing on stdout; every node is then on no switch. */
    if ((rc = gp_slurm_run(s, t, NULL, &text, &len, diag)) == GP_OK)
        rc = gp_slurm_parse_topology(text, "scontrol show topology", *out, *n,
                                     diag);
    free(text);
    if (rc != GP_OK) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

int gp_slurm_jobs(struct gp_slurm *s, struct gp_slurm_job **out, size_t *n,
                  struct gp_diag *diag)
{
    const char *a[] = {"squeue", "--json", NULL};
    char *text = NULL;
    size_t len = 0;
    int rc = gp_slurm_run(s, a, NULL, &text, &len, diag);
    if (rc != GP_OK)
        return rc;
    rc = gp_slurm_parse_jobs(text, len, "squeue --json", out, n, diag);
    free(text);
    return rc;
}

/* argv being built: fixed room, every string owned */
struct args {
    const char *v[48];
    char *own[48];
    size_t n, nown;
};

static void arg(struct args *a, const char *s)
{
    if (a->n + 1 < sizeof(a->v) / sizeof(a->v[0]))
        a->v[a->n++] = s;
    a->v[a->n] = NULL;
}

static void argf(struct args *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void argf(struct args *a, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    if (!s || a->nown == sizeof(a->own) / sizeof(a->own[0])) {
        free(s);
        arg(a, "--bad-argument"); /* fails the command, loudly */
        return;
    }
    a->own[a->nown++] = s;
    arg(a, s);
}

static void args_free(struct args *a)
{
    for (size_t i = 0; i < a->nown; i++)
        free(a->own[i]);
}

int gp_slurm_submit_held(struct gp_slurm *s, const struct gp_slurm_submit *r,
                         uint32_t *id, struct gp_diag *diag)
{
    struct args a = {0};
    char *text = NULL;
    int rc;
    if (!r->script || strncmp(r->script, "#!", 2) || r->nodes == 0 ||
        (r->gpus_per_job && r->gpus_per_node))
        return gp_diag_set(diag, GP_EINVAL, "sbatch",
                           "a script starting with #!, nodes >= 1 and GPUs "
                           "per node or per job, not both");
    arg(&a, "sbatch");
    arg(&a, "--parsable");
    arg(&a, "--hold");
    arg(&a, "--requeue");
    arg(&a, "--open-mode=append");
    argf(&a, "--nodes=%u", r->nodes);
    if (r->gpus_per_job) {
        if (r->gpu_type && *r->gpu_type)
            argf(&a, "--gpus=%s:%u", r->gpu_type, r->gpus_per_job);
        else
            argf(&a, "--gpus=%u", r->gpus_per_job);
    } else if (r->gpus_per_node) {
        if (r->gpu_type && *r->gpu_type)
            argf(&a, "--gres=gpu:%s:%u", r->gpu_type, r->gpus_per_node);
        else
            argf(&a, "--gres=gpu:%u", r->gpus_per_node);
    }
    if (r->cpus_per_node)
        argf(&a, "--ntasks-per-node=%u", r->cpus_per_node);
    if (r->mem_per_node_mib)
        argf(&a, "--mem=%llu", (unsigned long long)r->mem_per_node_mib);
    if (r->time_limit_min)
        argf(&a, "--time=%u", r->time_limit_min);
    if (r->name)
        argf(&a, "--job-name=%s", r->name);
    if (r->account)
        argf(&a, "--account=%s", r->account);
    if (r->partition)
        argf(&a, "--partition=%s", r->partition);
    if (r->comment)
        argf(&a, "--comment=%s", r->comment);
    if (r->workdir)
        argf(&a, "--chdir=%s", r->workdir);
    if (r->output)
        argf(&a, "--output=%s", r->output);
    if (r->error)
        argf(&a, "--error=%s", r->error);
    if (r->uid >= 0)
        argf(&a, "--uid=%lld", (long long)r->uid);
    if (r->gid >= 0)
        argf(&a, "--gid=%lld", (long long)r->gid);
    if (r->clean_env) {
        /* what the job inherits: the batch script sets the rest */
        const char *conf = getenv("SLURM_CONF");
        char path_var[] = "PATH=/usr/local/bin:/usr/bin:/bin", conf_var[1200];
        char *envp[] = {path_var, NULL, NULL};

        if (conf && snprintf(conf_var, sizeof(conf_var), "SLURM_CONF=%s",
                             conf) < (int)sizeof(conf_var))
            envp[1] = conf_var;
        rc = run_env(s, a.v, r->script, envp, &text, NULL, diag);
    } else {
        rc = gp_slurm_run(s, a.v, r->script, &text, NULL, diag);
    }
    args_free(&a);
    if (rc != GP_OK)
        return rc;
    /* "17" or "17;cluster" */
    char *e;
    unsigned long v = strtoul(text, &e, 10);
    if (e == text || v == 0 || v > UINT32_MAX ||
        (*e && *e != ';' && *e != '\n')) {
        rc = gp_diag_set(diag, GP_EPARSE, "sbatch",
                         "no job id in its answer '%.40s'", text);
    } else {
        *id = (uint32_t)v;
    }
    free(text);
    return rc;
}

static int simple(struct gp_slurm *s, struct args *a, struct gp_diag *diag)
{
    int rc = gp_slurm_run(s, a->v, NULL, NULL, NULL, diag);
    args_free(a);
    return rc;
}

/* `scontrol VERB ID` */
static int scontrol_job(struct gp_slurm *s, const char *verb, uint32_t id,
                        struct gp_diag *diag)
{
    struct args a = {0};
    arg(&a, "scontrol");
    arg(&a, verb);
    argf(&a, "%u", id);
    return simple(s, &a, diag);
}

int gp_slurm_place(struct gp_slurm *s, uint32_t id, const char *const *nodes,
                   size_t n, struct gp_diag *diag)
{
    struct args a = {0};
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(nodes[i]) + 1;
    char *list = malloc(len);
    if (!list)
        return gp_diag_set(diag, GP_ENOMEM, "scontrol", "out of memory");
    list[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (i)
            strcat(list, ",");
        strcat(list, nodes[i]);
    }
    arg(&a, "scontrol");
    arg(&a, "update");
    argf(&a, "JobId=%u", id);
    argf(&a, "NumNodes=%zu-%zu", n, n);
    argf(&a, "ReqNodeList=%s", list);
    arg(&a, "StartTime=now");
    free(list);
    int rc = simple(s, &a, diag);
    if (rc != GP_OK)
        return rc;
    return scontrol_job(s, "release", id, diag);
}

int gp_slurm_signal(struct gp_slurm *s, uint32_t id, int sig,
                    struct gp_diag *diag)
{
    struct args a = {0};
    arg(&a, "scancel");
    argf(&a, "--signal=%d", sig);
    arg(&a, "--full");
    argf(&a, "%u", id);
    return simple(s, &a, diag);
}

int gp_slurm_requeue_hold(struct gp_slurm *s, uint32_t id, struct gp_diag *diag)
{
    return scontrol_job(s, "requeuehold", id, diag);
}

int gp_slurm_cancel(struct gp_slurm *s, uint32_t id, struct gp_diag *diag)
{
    struct args a = {0};
    arg(&a, "scancel");
    argf(&a, "%u", id);
    return simple(s, &a, diag);
}

int gp_slurm_hold(struct gp_slurm *s, uint32_t id, struct gp_diag *diag)
{
    return scontrol_job(s, "hold", id, diag);
}

int gp_slurm_set_comment(struct gp_slurm *s, uint32_t id, const char *comment,
                         struct gp_diag *diag)
{
    struct args a = {0};
    arg(&a, "scontrol");
    arg(&a, "update");
    argf(&a, "JobId=%u", id);
    argf(&a, "Comment=%s", comment);
    return simple(s, &a, diag);
}

int gp_slurm_node_state(struct gp_slurm *s, const char *node, const char *state,
                        const char *reason, struct gp_diag *diag)
{
    struct args a = {0};
    arg(&a, "scontrol");
    arg(&a, "update");
    argf(&a, "NodeName=%s", node);
    argf(&a, "State=%s", state);
    if (reason)
        argf(&a, "Reason=%s", reason);
    return simple(s, &a, diag);
}
