/* nodeevents.c - the node events file (see gpupool/nodeevents.h).
 *
 * Key decision: the file is read whole and sorted once; the simulator
 * walks it in time order beside its other events. A bad line stops the
 * read with its place named, never a silent skip: a failure left out
 * changes every figure after it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpupool/nodeevents.h"

#define LINE_MAX_BYTES 4096

void gp_node_events_fini(struct gp_node_events *e)
{
    free(e->ev);
    memset(e, 0, sizeof(*e));
}

/* Split a line at commas in place; up to `max` fields. */
static size_t split(char *s, char **f, size_t max)
{
    size_t n = 0;

    while (n < max) {
        char *comma = strchr(s, ',');
        f[n++] = s;
        if (!comma)
            break;
        *comma = '\0';
        s = comma + 1;
    }
    return n;
}

static char *trim(char *s)
{
    char *e;

    while (*s == ' ' || *s == '\t')
        s++;
    e = s + strlen(s);
    while (e > s &&
           (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
        *--e = '\0';
    return s;
}

static int by_time(const void *a, const void *b)
{
    const struct gp_node_event *x = a, *y = b;

    if (x->at_us != y->at_us)
        return x->at_us < y->at_us ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

int gp_node_events_load(struct gp_node_events *out, const char *path,
                        const struct gp_cluster *c, struct gp_diag *diag)
{
    struct gp_node_events e = {0};
    char line[LINE_MAX_BYTES + 2], where[64];
    int col_t = -1, col_n = -1, col_s = -1, ncols = 0;
    unsigned long lineno = 0;
    FILE *f = fopen(path, "r");
    int rc = GP_OK;

    if (!f)
        return gp_diag_set(diag, GP_EIO, path, "cannot open: %s",
                           strerror(errno));
    while (fgets(line, sizeof(line), f)) {
        char *fields[64], *s;
        size_t nf;

        lineno++;
        snprintf(where, sizeof(where), "%s:%lu", path, lineno);
        if (!strchr(line, '\n') && !feof(f)) {
            rc = gp_diag_set(diag, GP_EPARSE, where,
                             "line longer than %d bytes", LINE_MAX_BYTES);
            goto out;
        }
        s = trim(line);
        if (!*s || *s == '#')
            continue;
        nf = split(s, fields, 64);
        if (col_t < 0) { /* the header */
            for (size_t i = 0; i < nf; i++) {
                char *h = trim(fields[i]);
                if (!strcmp(h, "time_s"))
                    col_t = (int)i;
                else if (!strcmp(h, "node"))
                    col_n = (int)i;
                else if (!strcmp(h, "state"))
                    col_s = (int)i;
            }
            if (col_t < 0 || col_n < 0 || col_s < 0) {
                rc = gp_diag_set(diag, GP_EPARSE, where,
                                 "the header must name time_s, node and "
                                 "state");
                goto out;
            }
            ncols = (int)nf;
            continue;
        }
        if ((int)nf < ncols) {
            rc = gp_diag_set(diag, GP_EPARSE, where,
                             "%zu fields, the header has %d", nf, ncols);
            goto out;
        }
        {
            char *end, *t = trim(fields[col_t]), *name = trim(fields[col_n]);
            struct gp_node_event ev;
            double x;

            errno = 0;
            x = strtod(t, &end);
            if (end == t || *end || errno || !isfinite(x) || x < 0 ||
                x > 3.15e9) {
                rc = gp_diag_set(diag, GP_EPARSE, where,
                                 "time_s: expected seconds >= 0, got '%s'", t);
                goto out;
            }
            ev.at_us = (int64_t)llround(x * 1e6);
            if (gp_cluster_find_node(c, name, &ev.node) != GP_OK) {
                rc = gp_diag_set(diag, GP_ENOENT, where,
                                 "node: the cluster has no node '%s'", name);
                goto out;
            }
            if (gp_node_state_parse(trim(fields[col_s]), &ev.state) != GP_OK) {
                rc = gp_diag_set(diag, GP_EPARSE, where,
                                 "state: expected up, drain or down, got "
                                 "'%s'",
                                 trim(fields[col_s]));
                goto out;
            }
            if (e.n == GP_NODE_EVENTS_MAX) {
                rc =
                    gp_diag_set(diag, GP_ERANGE, where,
                                "more than %d node events", GP_NODE_EVENTS_MAX);
                goto out;
            }
            if (e.n == e.cap) {
                size_t cap = e.cap ? e.cap * 2 : 64;
                struct gp_node_event *p = realloc(e.ev, cap * sizeof(*p));
                if (!p) {
                    rc = gp_diag_set(diag, GP_ENOMEM, where, "out of memory");
                    goto out;
                }
                e.ev = p;
                e.cap = cap;
            }
            ev.order = (uint32_t)e.n;
            e.ev[e.n++] = ev;
        }
    }
    if (ferror(f)) {
        rc = gp_diag_set(diag, GP_EIO, path, "read error");
        goto out;
    }
    if (col_t < 0) {
        rc = gp_diag_set(diag, GP_EPARSE, path, "no header line");
        goto out;
    }
    qsort(e.ev, e.n, sizeof(*e.ev), by_time);
out:
    fclose(f);
    if (rc != GP_OK) {
        gp_node_events_fini(&e);
        return rc;
    }
    *out = e;
    return GP_OK;
}
