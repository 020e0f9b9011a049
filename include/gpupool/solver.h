/* solver.h - linear and mixed-integer programs for the policies that solve
 * one each round (Gavel, AlloX, Pollux, OASiS ...): a problem built once,
 * handed to a solver behind an ops table, its solution read back.
 *
 * Key decision: the problem is gpupool's own (struct gp_lp: columns with
 * bounds, an objective and integrality; rows with bounds; coefficients as
 * triplets), not a solver's. A policy builds it without knowing which
 * solver runs, and the same problem can be solved by each (the
 * differential test does). Two solvers ship: "coin", COIN-OR CLP for a
 * problem without integer columns and CBC for one with (the default), and
 * "glpk", GNU GLPK's simplex and branch-and-cut. The scheduling core never
 * includes this file: policies call it (docs/solver.md).
 *
 * Bounds: -INFINITY / INFINITY for none; a row with lo == hi is an
 * equality. Every fallible call returns GP_OK or a GP_E* code and fills
 * the optional diag naming the column or row at fault.
 */
#ifndef GPUPOOL_SOLVER_H
#define GPUPOOL_SOLVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpupool/err.h"

/* The most columns, rows and coefficients one problem may have: far above
 * what a round needs (Gavel's LP at 10,000 jobs on 3 GPU types is about
 * 30,000 columns), small enough that every index fits an int. */
#define GP_LP_MAX_COLS 10000000
#define GP_LP_MAX_ROWS 10000000
#define GP_LP_MAX_NZ 100000000

enum gp_lp_sense { GP_LP_MINIMIZE, GP_LP_MAXIMIZE };

struct gp_lp;

/* An empty problem (minimize, no columns, no rows); NULL without memory. */
struct gp_lp *gp_lp_new(void);
void gp_lp_free(struct gp_lp *lp);

void gp_lp_set_sense(struct gp_lp *lp, enum gp_lp_sense sense);
/* A column lo <= x <= hi with objective coefficient `obj`, integer or not.
 * Returns its index (0, 1, ...) or a GP_E* code: GP_EINVAL for lo > hi, a
 * NaN, an infinite objective, or lo = +inf / hi = -inf; GP_ERANGE past
 * GP_LP_MAX_COLS; GP_ENOMEM. */
int gp_lp_add_col(struct gp_lp *lp, double lo, double hi, double obj,
                  bool integer, struct gp_diag *diag);
/* A row lo <= sum(vals[k] * x[cols[k]]) <= hi over n coefficients (a
 * column may appear once; zeros are dropped). Returns its index or a GP_E*
 * code: GP_EINVAL for lo > hi, a NaN or infinite coefficient, a column
 * that does not exist or appears twice; GP_ERANGE past the limits. */
int gp_lp_add_row(struct gp_lp *lp, double lo, double hi, size_t n,
                  const int *cols, const double *vals, struct gp_diag *diag);
/* Change a column's objective coefficient or bounds (problems rebuilt each
 * round change little). GP_EINVAL as gp_lp_add_col, or no such column. */
int gp_lp_set_obj(struct gp_lp *lp, int col, double obj, struct gp_diag *diag);
int gp_lp_set_col_bounds(struct gp_lp *lp, int col, double lo, double hi,
                         struct gp_diag *diag);
int gp_lp_set_row_bounds(struct gp_lp *lp, int row, double lo, double hi,
                         struct gp_diag *diag);

size_t gp_lp_ncols(const struct gp_lp *lp);
size_t gp_lp_nrows(const struct gp_lp *lp);
size_t gp_lp_nnz(const struct gp_lp *lp);
bool gp_lp_has_integers(const struct gp_lp *lp);

/* What bounds a solve. 0 means no limit. `iterations` bounds the simplex
 * iterations of a problem without integer columns; `nodes` the
 * branch-and-bound nodes of one with. A solve stopped by a limit says so
 * (GP_LP_LIMIT) and hands back the best point it had, if any. */
struct gp_lp_limits {
    double seconds;
    int64_t iterations;
    int64_t nodes;
    /* A problem without integer columns by an interior-point method,
     * without crossover (CLP's barrier, GLPK's glp_interior): where the
     * optimum is a face of many points, one inside it - near where an
     * interior-point solver such as ECOS stops - rather than one of its
     * vertices. Where that method does not reach an optimum, the simplex
     * solves the problem from scratch. `iterations` bounds the simplex
     * only. */
    bool interior;
};

/* A problem with integer columns whose relaxation is unbounded is
 * unbounded if it has an integer point, infeasible if not; branch and
 * bound on the rows alone settles which, but need not end (x - y = 0.5
 * over the integers, on which GLPK's node simplex also stalls). Without
 * the caller's limits, this many nodes and seconds; unsettled past them,
 * the status is GP_LP_LIMIT. */
#define GP_LP_SETTLE_NODES 10000
#define GP_LP_SETTLE_SECONDS 10.0

enum gp_lp_status {
    GP_LP_OPTIMAL,    /* proven optimal (a MILP: within the solver's gap) */
    GP_LP_INFEASIBLE, /* no point satisfies the rows and bounds */
    GP_LP_UNBOUNDED,  /* the objective improves without end (with integer
                         columns: and an integer point exists) */
    GP_LP_LIMIT,      /* a limit stopped it: `feasible` says if x is a point */
    GP_LP_FAILED,     /* the solver gave up (numerical trouble) */
};

/* A solution. x has one value per column, duals one per row (a problem
 * without integer columns solved to optimality; else NULL). Free with
 * gp_lp_result_free. */
struct gp_lp_result {
    enum gp_lp_status status;
    bool feasible;    /* x satisfies the rows, bounds and integrality */
    double objective; /* at x, when feasible */
    double *x;        /* ncols values, or NULL when there is no point */
    double *duals;    /* nrows values, or NULL */
    size_t ncols, nrows;
    int64_t iterations; /* simplex iterations, as the solver counts them */
    int64_t nodes;      /* branch-and-bound nodes (0 without integers) */
    double seconds;     /* wall time of the solve (the library's calls) */
    const char *solver; /* the ops' name */
};

void gp_lp_result_free(struct gp_lp_result *r);
const char *gp_lp_status_name(enum gp_lp_status s);

/* One solver: solve fills `out` (zeroed first) or returns a GP_E* code
 * (GP_ENOMEM) with diag. A status other than GP_LP_OPTIMAL is an answer,
 * not an error. */
struct gp_solver_ops {
    const char *name;
    const char *what; /* one line: the library and its version */
    int (*solve)(const struct gp_lp *lp, const struct gp_lp_limits *lim,
                 struct gp_lp_result *out, struct gp_diag *diag);
};

/* "coin" (the default) or "glpk"; NULL for another name. */
const struct gp_solver_ops *gp_solver_find(const char *name);
/* The solvers in order, the default first; *n gets their number. */
const struct gp_solver_ops *const *gp_solver_all(size_t *n);
/* Solve with the default solver. */
int gp_lp_solve(const struct gp_lp *lp, const struct gp_lp_limits *lim,
                struct gp_lp_result *out, struct gp_diag *diag);

/* Write the problem in free MPS (columns x0, x1, ...; rows r0, r1, ...;
 * the objective row `obj`; integer columns between INTORG/INTEND markers;
 * every bound written out), so that any solver can be run on what a policy
 * built: `glpsol --freemps F`, `clp F -solve`, `cbc F -solve`. MPS has no
 * sense that both GLPK and COIN read: a first comment line says whether to
 * maximize (`--max`, `-max`). GP_EIO naming the path. */
int gp_lp_write_mps(const struct gp_lp *lp, const char *path,
                    struct gp_diag *diag);

/* The worst violation of x against lp's bounds, rows and integrality (0
 * for a point that satisfies them exactly): how a caller, or a test,
 * checks what a solver handed back. */
double gp_lp_violation(const struct gp_lp *lp, const double *x);

#endif
