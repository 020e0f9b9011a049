/* goodput_load.c - reads Pollux's model profiles into a goodput model
 * (goodput.h): a directory with one subdirectory per model, or an archive
 * of the same (members <anything>/<model>/<file>.csv), or the copy bundled
 * with gpupool.
 *
 * Per model: placements.csv (placement,local_bsz,step_time,sync_time),
 * scalability.csv (num_nodes,num_replicas,local_bsz,step_time,sync_time)
 * and validation-<B>.csv (progress,iteration,metric,grad_sqr,grad_var),
 * one per global batch size B. Other files are ignored. Every error names
 * file:line and the field.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpupool/goodput.h"
#include "gpupool/trace.h"
#include "trace/io.h"

extern const unsigned char gp_pollux_profiles[];
extern const size_t gp_pollux_profiles_len;

enum kind { K_PLACEMENTS, K_SCALABILITY, K_VALID };

static const char *const headers[] = {
    [K_PLACEMENTS] = "placement,local_bsz,step_time,sync_time",
    [K_SCALABILITY] = "num_nodes,num_replicas,local_bsz,step_time,sync_time",
    [K_VALID] = "progress,iteration,metric,grad_sqr,grad_var",
};
static const char *const fields[][5] = {
    [K_PLACEMENTS] = {"placement", "local_bsz", "step_time", "sync_time"},
    [K_SCALABILITY] = {"num_nodes", "num_replicas", "local_bsz", "step_time",
                       "sync_time"},
    [K_VALID] = {"progress", "iteration", "metric", "grad_sqr", "grad_var"},
};

/* The artifact's settings of its models beyond what the profiles say
 * (simulator/applications.py): yolov3's per-GPU batch size is capped at
 * 8. */
static uint32_t max_local_of(const char *model)
{
    return strcmp(model, "yolov3") == 0 ? 8 : 0;
}

/* Which file this is, and for a validation run its batch size. */
static bool kind_of(const char *base, enum kind *k, uint32_t *bsz)
{
    char *end;
    unsigned long b;

    if (strcmp(base, "placements.csv") == 0)
        return *k = K_PLACEMENTS, true;
    if (strcmp(base, "scalability.csv") == 0)
        return *k = K_SCALABILITY, true;
    if (strncmp(base, "validation-", 11) != 0)
        return false;
    errno = 0;
    b = strtoul(base + 11, &end, 10);
    if (end == base + 11 || strcmp(end, ".csv") != 0 || errno || b < 1 ||
        b > UINT32_MAX)
        return false;
    *k = K_VALID;
    *bsz = (uint32_t)b;
    return true;
}

static uint32_t model_of(struct gp_goodput *g, const char *name,
                         struct gp_diag *diag, int *rc)
{
    uint32_t m;

    if (gp_goodput_find(g, name, &m))
        return m;
    if ((*rc = gp_goodput_add_model(g, name, &m)) != GP_OK)
        gp_diag_set(diag, *rc, name, "cannot add model");
    return m;
}

/* One file of a model, read from `in` (positioned at it). */
static int read_file(struct gp_goodput *g, struct gp_input *in,
                     const char *model_name, enum kind k, uint32_t bsz,
                     struct gp_diag *diag)
{
    char *line;
    size_t len;
    int rc = GP_OK, got;
    bool header = true;
    uint32_t m = model_of(g, model_name, diag, &rc);
    size_t nf = k == K_PLACEMENTS ? 4 : 5;

    if (rc != GP_OK)
        return rc;
    while ((got = gp_input_getline(in, &line, &len, diag)) == 1) {
        double v[5];
        char *p = line, placement[24] = "";

        if (len == 0)
            continue;
        if (header) {
            if (strcmp(line, headers[k]) != 0)
                return gp_diag_set(diag, GP_EPARSE, gp_input_where(in),
                                   "expected the header '%s'", headers[k]);
            header = false;
            continue;
        }
        for (size_t f = 0; f < nf; f++) {
            char *end, *comma = strchr(p, ',');

            if ((comma == NULL) != (f == nf - 1))
                return gp_diag_set(diag, GP_EPARSE, gp_input_where(in),
                                   "expected %zu fields", nf);
            if (comma)
                *comma = '\0';
            if (k == K_PLACEMENTS && f == 0) {
                if (strlen(p) == 0 || strlen(p) >= sizeof(placement) ||
                    strspn(p, "123456789") != strlen(p))
                    return gp_diag_set(diag, GP_EPARSE, gp_input_where(in),
                                       "placement: expected digits 1-9 "
                                       "(replicas per node), got '%s'",
                                       p);
                snprintf(placement, sizeof(placement), "%s", p);
                v[0] = 0;
            } else {
                errno = 0;
                v[f] = strtod(p, &end);
                if (end == p || *end || errno || !isfinite(v[f]))
                    return gp_diag_set(diag, GP_EPARSE, gp_input_where(in),
                                       "%s: expected a number, got '%s'",
                                       fields[k][f], p);
            }
            p = comma ? comma + 1 : p;
        }
        switch (k) {
        case K_PLACEMENTS:
            rc = gp_goodput_add_step(g, m, placement, v[1], v[2], v[3]);
            break;
        case K_SCALABILITY:
            if (v[0] < 1 || v[0] > GP_GOODPUT_MAX_NODES || v[1] < v[0] ||
                v[1] > 1e6 || v[0] != floor(v[0]) || v[1] != floor(v[1]))
                return gp_diag_set(diag, GP_EPARSE, gp_input_where(in),
                                   "num_nodes, num_replicas: expected "
                                   "1 <= nodes <= replicas (whole numbers)");
            rc = gp_goodput_add_scale(g, m, (uint32_t)v[0], (uint32_t)v[1],
                                      v[2], v[3], v[4]);
            break;
        case K_VALID:
            rc = gp_goodput_add_valid(g, m, bsz, v[0], v[3], v[4]);
            break;
        }
        if (rc == GP_EINVAL)
            return gp_diag_set(diag, GP_EPARSE, gp_input_where(in), "%s",
                               k == K_VALID
                                   ? "progress must be > 0 and not fall; "
                                     "grad_sqr and grad_var >= 0"
                                   : "local_bsz >= 1, step_time > 0 and "
                                     "0 <= sync_time <= step_time");
        if (rc != GP_OK)
            return gp_diag_set(diag, rc, gp_input_where(in), "out of memory");
    }
    if (got < 0)
        return got;
    if (header)
        return gp_diag_set(diag, GP_EPARSE, gp_input_where(in),
                           "empty file (expected the header '%s')", headers[k]);
    return GP_OK;
}

/* Every member of an archive: <...>/<model>/<file>. */
static int read_archive(struct gp_goodput *g, struct gp_input *in,
                        struct gp_diag *diag)
{
    const char *name;
    int rc;

    while ((rc = gp_input_next_member(in, &name, diag)) == 1) {
        char path[512], *base, *model;
        enum kind k;
        uint32_t bsz = 0;

        snprintf(path, sizeof(path), "%s", name);
        if (!(base = strrchr(path, '/')))
            continue;
        *base++ = '\0';
        model = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        if (!*model || !kind_of(base, &k, &bsz))
            continue;
        if ((rc = read_file(g, in, model, k, bsz, diag)) != GP_OK)
            return rc;
    }
    return rc;
}

static int read_dir(struct gp_goodput *g, const char *dir, struct gp_diag *diag)
{
    DIR *d = opendir(dir), *sub;
    struct dirent *e, *f;
    int rc = GP_OK;

    if (!d)
        return gp_diag_set(diag, GP_EIO, dir, "%s", strerror(errno));
    while (rc == GP_OK && (e = readdir(d))) {
        char path[4096];

        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (!(sub = opendir(path)))
            continue; /* not a model's directory */
        while (rc == GP_OK && (f = readdir(sub))) {
            char file[8192];
            struct gp_input *in;
            enum kind k;
            uint32_t bsz = 0;
            const char *member;

            if (!kind_of(f->d_name, &k, &bsz))
                continue;
            snprintf(file, sizeof(file), "%s/%s", path, f->d_name);
            if ((rc = gp_input_open_path(&in, file, diag)) != GP_OK)
                break;
            if ((rc = gp_input_next_member(in, &member, diag)) == 1)
                rc = read_file(g, in, e->d_name, k, bsz, diag);
            else if (rc == 0)
                rc = gp_diag_set(diag, GP_EPARSE, file, "empty file");
            gp_input_close(in);
            if (rc != GP_OK && diag &&
                strncmp(diag->where, f->d_name, strlen(f->d_name)) == 0) {
                /* every model has a placements.csv: say whose */
                size_t nd = strlen(e->d_name), nw = strlen(diag->where);

                if (nd + 1 + nw < sizeof(diag->where)) {
                    memmove(diag->where + nd + 1, diag->where, nw + 1);
                    memcpy(diag->where, e->d_name, nd);
                    diag->where[nd] = '/';
                }
            }
        }
        closedir(sub);
    }
    closedir(d);
    return rc;
}

static int finish_all(struct gp_goodput *g, const char *where,
                      struct gp_diag *diag)
{
    char err[256];
    int rc;

    if (gp_goodput_nmodels(g) == 0)
        return gp_diag_set(
            diag, GP_EPARSE, where,
            "no model profiles (expected <model>/placements.csv, "
            "scalability.csv, validation-<B>.csv)");
    for (uint32_t m = 0; m < gp_goodput_nmodels(g); m++)
        if ((rc = gp_goodput_finish(g, m, max_local_of(gp_goodput_name(g, m)),
                                    err, sizeof(err))) != GP_OK)
            return gp_diag_set(diag, rc == GP_EINVAL ? GP_EPARSE : rc, where,
                               "%s", err);
    return GP_OK;
}

int gp_goodput_load(struct gp_goodput **out, const char *path,
                    struct gp_diag *diag)
{
    struct gp_goodput *g;
    struct gp_input *in = NULL;
    struct stat st;
    int rc;

    *out = NULL;
    if ((rc = gp_goodput_new(&g)) != GP_OK)
        return gp_diag_set(diag, rc, path ? path : "", "out of memory");
    if (!path || strcmp(path, "pollux") == 0) {
        rc = gp_input_open_mem(&in, gp_pollux_profiles, gp_pollux_profiles_len,
                               "pollux-profiles.tar.xz", diag);
        if (rc == GP_OK)
            rc = read_archive(g, in, diag);
        path = "pollux-profiles.tar.xz (bundled)";
    } else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        rc = read_dir(g, path, diag);
    } else {
        rc = gp_input_open_path(&in, path, diag);
        if (rc == GP_OK)
            rc = read_archive(g, in, diag);
    }
    gp_input_close(in);
    if (rc == GP_OK)
        rc = finish_all(g, path, diag);
    if (rc != GP_OK) {
        gp_goodput_free(g);
        return rc;
    }
    *out = g;
    return GP_OK;
}
