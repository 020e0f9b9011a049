/* lp.c - the problem builder shared by every solver (solver.h). */
#include "solver/solver_priv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* x is feasible when no bound, row or integrality is violated by more
 * than this, relative to the bound's size (see gp_lp_violation). */
#define FEAS_TOL 1e-6

struct gp_lp *gp_lp_new(void)
{
    struct gp_lp *lp = calloc(1, sizeof(*lp));

    if (lp && !(lp->row_start = calloc(1, sizeof(*lp->row_start)))) {
        free(lp);
        return NULL;
    }
    return lp;
}

void gp_lp_free(struct gp_lp *lp)
{
    if (!lp)
        return;
    free(lp->col_lo);
    free(lp->col_hi);
    free(lp->obj);
    free(lp->integer);
    free(lp->seen);
    free(lp->row_lo);
    free(lp->row_hi);
    free(lp->row_start);
    free(lp->row_col);
    free(lp->row_val);
    free(lp);
}

void gp_lp_set_sense(struct gp_lp *lp, enum gp_lp_sense sense)
{
    lp->sense = sense;
}

size_t gp_lp_ncols(const struct gp_lp *lp)
{
    return lp->ncols;
}
size_t gp_lp_nrows(const struct gp_lp *lp)
{
    return lp->nrows;
}
size_t gp_lp_nnz(const struct gp_lp *lp)
{
    return lp->nnz;
}
bool gp_lp_has_integers(const struct gp_lp *lp)
{
    return lp->nints > 0;
}

/* Grow an array of n elements of `size` to hold at least `need`. */
static int grow(void **a, size_t size, size_t need, size_t *cap)
{
    size_t c = *cap ? *cap : 16;
    void *p;

    if (need <= *cap)
        return GP_OK;
    while (c < need)
        c *= 2;
    if (!(p = realloc(*a, c * size)))
        return GP_ENOMEM;
    *a = p;
    *cap = c;
    return GP_OK;
}

static int check_bounds(double lo, double hi, const char *what, size_t i,
                        struct gp_diag *diag)
{
    if (isnan(lo) || isnan(hi) || lo > hi || lo == INFINITY || hi == -INFINITY)
        return gp_diag_set(diag, GP_EINVAL, "lp",
                           "%s %zu: bounds [%g, %g] hold no value", what, i, lo,
                           hi);
    return GP_OK;
}

int gp_lp_add_col(struct gp_lp *lp, double lo, double hi, double obj,
                  bool integer, struct gp_diag *diag)
{
    size_t n = lp->ncols, cap = lp->col_cap;
    int rc;

    if (n >= GP_LP_MAX_COLS)
        return gp_diag_set(diag, GP_ERANGE, "lp", "more than %d columns",
                           GP_LP_MAX_COLS);
    if ((rc = check_bounds(lo, hi, "column", n, diag)) != GP_OK)
        return rc;
    if (!isfinite(obj))
        return gp_diag_set(diag, GP_EINVAL, "lp",
                           "column %zu: objective coefficient %g is not "
                           "finite",
                           n, obj);
    if (n == cap) {
        size_t c;

        c = cap;
        if (grow((void **)&lp->col_lo, sizeof(double), n + 1, &c) != GP_OK)
            goto nomem;
        c = cap;
        if (grow((void **)&lp->col_hi, sizeof(double), n + 1, &c) != GP_OK)
            goto nomem;
        c = cap;
        if (grow((void **)&lp->obj, sizeof(double), n + 1, &c) != GP_OK)
            goto nomem;
        c = cap;
        if (grow((void **)&lp->integer, sizeof(bool), n + 1, &c) != GP_OK)
            goto nomem;
        c = cap;
        if (grow((void **)&lp->seen, sizeof(unsigned), n + 1, &c) != GP_OK)
            goto nomem;
        lp->col_cap = c;
    }
    lp->col_lo[n] = lo;
    lp->col_hi[n] = hi;
    lp->obj[n] = obj;
    lp->integer[n] = integer;
    lp->seen[n] = 0;
    lp->nints += integer;
    lp->ncols = n + 1;
    return (int)n;
nomem:
    return gp_diag_set(diag, GP_ENOMEM, "lp", "out of memory");
}

int gp_lp_add_row(struct gp_lp *lp, double lo, double hi, size_t n,
                  const int *cols, const double *vals, struct gp_diag *diag)
{
    size_t r = lp->nrows, at = lp->nnz, kept = 0, cap;
    int rc;

    if (r >= GP_LP_MAX_ROWS)
        return gp_diag_set(diag, GP_ERANGE, "lp", "more than %d rows",
                           GP_LP_MAX_ROWS);
    if (n > GP_LP_MAX_NZ - lp->nnz)
        return gp_diag_set(diag, GP_ERANGE, "lp", "more than %d coefficients",
                           GP_LP_MAX_NZ);
    if ((rc = check_bounds(lo, hi, "row", r, diag)) != GP_OK)
        return rc;
    if (++lp->stamp == 0) { /* wrapped: no column may carry a stale stamp */
        memset(lp->seen, 0, lp->ncols * sizeof(*lp->seen));
        lp->stamp = 1;
    }
    for (size_t k = 0; k < n; k++) {
        if (cols[k] < 0 || (size_t)cols[k] >= lp->ncols)
            return gp_diag_set(diag, GP_EINVAL, "lp",
                               "row %zu: coefficient %zu names column %d, "
                               "which does not exist (%zu columns)",
                               r, k, cols[k], lp->ncols);
        if (!isfinite(vals[k]))
            return gp_diag_set(diag, GP_EINVAL, "lp",
                               "row %zu: coefficient of column %d is %g", r,
                               cols[k], vals[k]);
        if (lp->seen[cols[k]] == lp->stamp)
            return gp_diag_set(diag, GP_EINVAL, "lp",
                               "row %zu: column %d appears twice", r, cols[k]);
        lp->seen[cols[k]] = lp->stamp;
    }
    cap = lp->nz_cap;
    if (grow((void **)&lp->row_col, sizeof(int), at + n, &cap) != GP_OK)
        goto nomem;
    cap = lp->nz_cap;
    if (grow((void **)&lp->row_val, sizeof(double), at + n, &cap) != GP_OK)
        goto nomem;
    lp->nz_cap = cap;
    cap = lp->row_cap;
    if (grow((void **)&lp->row_lo, sizeof(double), r + 1, &cap) != GP_OK)
        goto nomem;
    cap = lp->row_cap;
    if (grow((void **)&lp->row_hi, sizeof(double), r + 1, &cap) != GP_OK)
        goto nomem;
    {
        size_t scap = lp->row_cap + 1;
        size_t *s = lp->row_start;

        if (r + 2 > scap) {
            if (!(s = realloc(s, (cap + 1) * sizeof(*s))))
                goto nomem;
            lp->row_start = s;
        }
    }
    lp->row_cap = cap;
    for (size_t k = 0; k < n; k++) {
        if (vals[k] == 0.0)
            continue;
        lp->row_col[at + kept] = cols[k];
        lp->row_val[at + kept] = vals[k];
        kept++;
    }
    lp->row_lo[r] = lo;
    lp->row_hi[r] = hi;
    lp->nnz = at + kept;
    lp->row_start[r + 1] = lp->nnz;
    lp->nrows = r + 1;
    return (int)r;
nomem:
    return gp_diag_set(diag, GP_ENOMEM, "lp", "out of memory");
}

int gp_lp_set_obj(struct gp_lp *lp, int col, double obj, struct gp_diag *diag)
{
    if (col < 0 || (size_t)col >= lp->ncols)
        return gp_diag_set(diag, GP_EINVAL, "lp", "no column %d", col);
    if (!isfinite(obj))
        return gp_diag_set(diag, GP_EINVAL, "lp",
                           "column %d: objective coefficient %g is not "
                           "finite",
                           col, obj);
    lp->obj[col] = obj;
    return GP_OK;
}

int gp_lp_set_col_bounds(struct gp_lp *lp, int col, double lo, double hi,
                         struct gp_diag *diag)
{
    int rc;

    if (col < 0 || (size_t)col >= lp->ncols)
        return gp_diag_set(diag, GP_EINVAL, "lp", "no column %d", col);
    if ((rc = check_bounds(lo, hi, "column", (size_t)col, diag)) != GP_OK)
        return rc;
    lp->col_lo[col] = lo;
    lp->col_hi[col] = hi;
    return GP_OK;
}

int gp_lp_set_row_bounds(struct gp_lp *lp, int row, double lo, double hi,
                         struct gp_diag *diag)
{
    int rc;

    if (row < 0 || (size_t)row >= lp->nrows)
        return gp_diag_set(diag, GP_EINVAL, "lp", "no row %d", row);
    if ((rc = check_bounds(lo, hi, "row", (size_t)row, diag)) != GP_OK)
        return rc;
    lp->row_lo[row] = lo;
    lp->row_hi[row] = hi;
    return GP_OK;
}

int gp__lp_by_column(const struct gp_lp *lp, int **col_start, int **row_idx,
                     double **val)
{
    int *start = calloc(lp->ncols + 1, sizeof(int));
    int *idx = malloc((lp->nnz ? lp->nnz : 1) * sizeof(int));
    double *v = malloc((lp->nnz ? lp->nnz : 1) * sizeof(double));
    int *next = malloc((lp->ncols ? lp->ncols : 1) * sizeof(int));

    if (!start || !idx || !v || !next) {
        free(start);
        free(idx);
        free(v);
        free(next);
        return GP_ENOMEM;
    }
    for (size_t k = 0; k < lp->nnz; k++)
        start[lp->row_col[k] + 1]++;
    for (size_t c = 0; c < lp->ncols; c++) {
        start[c + 1] += start[c];
        next[c] = start[c];
    }
    for (size_t r = 0; r < lp->nrows; r++)
        for (size_t k = lp->row_start[r]; k < lp->row_start[r + 1]; k++) {
            int at = next[lp->row_col[k]]++;

            idx[at] = (int)r;
            v[at] = lp->row_val[k];
        }
    free(next);
    *col_start = start;
    *row_idx = idx;
    *val = v;
    return GP_OK;
}

/* A row's MPS type and right-hand side; a range when both bounds are
 * finite and differ (a G row from lo, ranging up by hi - lo). */
static char mps_row(const struct gp_lp *lp, size_t r, double *rhs,
                    double *range)
{
    double lo = lp->row_lo[r], hi = lp->row_hi[r];

    *rhs = *range = 0;
    if (lo == -INFINITY && hi == INFINITY)
        return 'N';
    if (lo == hi) {
        *rhs = lo;
        return 'E';
    }
    if (lo == -INFINITY) {
        *rhs = hi;
        return 'L';
    }
    *rhs = lo;
    if (hi != INFINITY)
        *range = hi - lo;
    return 'G';
}

int gp_lp_write_mps(const struct gp_lp *lp, const char *path,
                    struct gp_diag *diag)
{
    FILE *f = fopen(path, "w");
    bool in_int = false;
    int *start = NULL, *idx = NULL;
    double *val = NULL;

    if (!f)
        return gp_diag_set(diag, GP_EIO, path, "cannot write: %s",
                           strerror(errno));
    if (gp__lp_by_column(lp, &start, &idx, &val) != GP_OK) {
        fclose(f);
        return gp_diag_set(diag, GP_ENOMEM, path, "out of memory");
    }
    /* no OBJSENSE: GLPK 5.0's reader refuses the section and COIN's
     * ignores it; the comment says how to maximize with each */
    if (lp->sense == GP_LP_MAXIMIZE)
        fputs("* gpupool: MAXIMIZE the row obj (glpsol --freemps F --max; "
              "clp F -max -solve; cbc F -max -solve)\n",
              f);
    else
        fputs("* gpupool: minimize the row obj (glpsol --freemps F; "
              "clp F -solve; cbc F -solve)\n",
              f);
    /* FREE: COIN reads the names and numbers as free MPS only so told */
    fputs("NAME gpupool FREE\nROWS\n N obj\n", f);
    for (size_t r = 0; r < lp->nrows; r++) {
        double rhs, range;

        fprintf(f, " %c r%zu\n", mps_row(lp, r, &rhs, &range), r);
    }
    fputs("COLUMNS\n", f);
    for (size_t c = 0; c < lp->ncols; c++) {
        if (lp->integer[c] != in_int) {
            fprintf(f, " M%zu 'MARKER' '%s'\n", c,
                    lp->integer[c] ? "INTORG" : "INTEND");
            in_int = lp->integer[c];
        }
        fprintf(f, " x%zu obj %.17g\n", c, lp->obj[c]);
        for (int k = start[c]; k < start[c + 1]; k++)
            fprintf(f, " x%zu r%d %.17g\n", c, idx[k], val[k]);
    }
    if (in_int)
        fprintf(f, " M%zu 'MARKER' 'INTEND'\n", lp->ncols);
    fputs("RHS\n", f);
    for (size_t r = 0; r < lp->nrows; r++) {
        double rhs, range;

        if (mps_row(lp, r, &rhs, &range) != 'N' && rhs != 0)
            fprintf(f, " rhs r%zu %.17g\n", r, rhs);
    }
    for (size_t r = 0, any = 0; r < lp->nrows; r++) {
        double rhs, range;

        if (mps_row(lp, r, &rhs, &range) == 'G' && range > 0) {
            if (!any++)
                fputs("RANGES\n", f);
            fprintf(f, " rng r%zu %.17g\n", r, range);
        }
    }
    fputs("BOUNDS\n", f);
    for (size_t c = 0; c < lp->ncols; c++) {
        double lo = lp->col_lo[c], hi = lp->col_hi[c];

        if (lo == hi)
            fprintf(f, " FX bnd x%zu %.17g\n", c, lo);
        else if (lo == -INFINITY && hi == INFINITY)
            fprintf(f, " FR bnd x%zu\n", c);
        else {
            if (lo == -INFINITY)
                fprintf(f, " MI bnd x%zu\n", c);
            else
                fprintf(f, " LO bnd x%zu %.17g\n", c, lo);
            if (hi == INFINITY)
                fprintf(f, " PL bnd x%zu\n", c);
            else
                fprintf(f, " UP bnd x%zu %.17g\n", c, hi);
        }
    }
    fputs("ENDATA\n", f);
    free(start);
    free(idx);
    free(val);
    if (ferror(f) | (fclose(f) != 0))
        return gp_diag_set(diag, GP_EIO, path, "cannot write: %s",
                           strerror(errno));
    return GP_OK;
}

double gp__lp_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* How far v lies outside [lo, hi], relative to the bound it passes. */
static double outside(double v, double lo, double hi)
{
    if (v < lo)
        return (lo - v) / fmax(1.0, fabs(lo));
    if (v > hi)
        return (v - hi) / fmax(1.0, fabs(hi));
    return 0.0;
}

double gp_lp_violation(const struct gp_lp *lp, const double *x)
{
    double worst = 0.0;

    for (size_t c = 0; c < lp->ncols; c++) {
        if (!isfinite(x[c]))
            return INFINITY;
        worst = fmax(worst, outside(x[c], lp->col_lo[c], lp->col_hi[c]));
        if (lp->integer[c])
            worst = fmax(worst, fabs(x[c] - nearbyint(x[c])));
    }
    for (size_t r = 0; r < lp->nrows; r++) {
        double a = 0.0;

        for (size_t k = lp->row_start[r]; k < lp->row_start[r + 1]; k++)
            a += lp->row_val[k] * x[lp->row_col[k]];
        worst = fmax(worst, outside(a, lp->row_lo[r], lp->row_hi[r]));
    }
    return worst;
}

int gp__lp_take_point(const struct gp_lp *lp, const double *x,
                      struct gp_lp_result *out, struct gp_diag *diag)
{
    double obj = 0.0;

    if (!(out->x = malloc((lp->ncols ? lp->ncols : 1) * sizeof(double))))
        return gp_diag_set(diag, GP_ENOMEM, "lp", "out of memory");
    memcpy(out->x, x, lp->ncols * sizeof(double));
    for (size_t c = 0; c < lp->ncols; c++)
        obj += lp->obj[c] * x[c];
    out->objective = obj;
    out->feasible = gp_lp_violation(lp, x) <= FEAS_TOL;
    return GP_OK;
}

void gp_lp_result_free(struct gp_lp_result *r)
{
    if (!r)
        return;
    free(r->x);
    free(r->duals);
    r->x = r->duals = NULL;
}

const char *gp_lp_status_name(enum gp_lp_status s)
{
    switch (s) {
    case GP_LP_OPTIMAL:
        return "optimal";
    case GP_LP_INFEASIBLE:
        return "infeasible";
    case GP_LP_UNBOUNDED:
        return "unbounded";
    case GP_LP_LIMIT:
        return "limit";
    case GP_LP_FAILED:
        return "failed";
    }
    return "?";
}

static const struct gp_solver_ops *const solvers[] = {
    &gp__solver_coin,
    &gp__solver_glpk,
};

const struct gp_solver_ops *const *gp_solver_all(size_t *n)
{
    *n = sizeof(solvers) / sizeof(solvers[0]);
    return solvers;
}

const struct gp_solver_ops *gp_solver_find(const char *name)
{
    for (size_t i = 0; i < sizeof(solvers) / sizeof(solvers[0]); i++)
        if (strcmp(solvers[i]->name, name) == 0)
            return solvers[i];
    return NULL;
}

int gp_lp_solve(const struct gp_lp *lp, const struct gp_lp_limits *lim,
                struct gp_lp_result *out, struct gp_diag *diag)
{
    return solvers[0]->solve(lp, lim, out, diag);
}
