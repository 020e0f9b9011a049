/* glpk.c - the "glpk" solver: GNU GLPK's simplex (glp_simplex), and for a
 * problem with integer columns its branch-and-cut (glp_intopt) from the
 * simplex's relaxation (Debian's libglpk-dev).
 *
 * GLPK numbers rows and columns from 1 and says which bounds a row or
 * column has by a type (free, lower, upper, double, fixed). Its presolver
 * is left off: with it, an infeasible or unbounded problem comes back as
 * "no primal feasible solution" without saying which. GLPK writes to the
 * terminal unless told not to, and aborts the process on a malformed
 * call: gp_lp's checks keep every call well formed.
 */
#include "solver/solver_priv.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glpk.h>

#define STR_(x) #x
#define STR(x) STR_(x)

static int glpk_type(double lo, double hi)
{
    if (lo == -INFINITY && hi == INFINITY)
        return GLP_FR;
    if (hi == INFINITY)
        return GLP_LO;
    if (lo == -INFINITY)
        return GLP_UP;
    return lo == hi ? GLP_FX : GLP_DB;
}

static double finite_or_zero(double v)
{
    return isfinite(v) ? v : 0.0;
}

static int to_ms(double seconds)
{
    double ms = ceil(seconds * 1000.0);

    return ms >= (double)INT_MAX ? INT_MAX : ms < 1 ? 1 : (int)ms;
}

/* Branch and cut's callback: the size of the search tree, and GLPK's
 * only way to a node limit (glp_iocp has none): stop past `cap`. */
struct nodes {
    int64_t total, cap; /* cap 0: none */
    bool stopped;
};

static void count_nodes(glp_tree *tree, void *info)
{
    struct nodes *n = info;
    int active, current, total;

    glp_ios_tree_size(tree, &active, &current, &total);
    n->total = total;
    if (n->cap > 0 && total > n->cap && !n->stopped) {
        n->stopped = true;
        glp_ios_terminate(tree);
    }
}

/* Branch and cut from the relaxation's optimum, within the time left of
 * the limit and n->cap nodes: glp_intopt's return. */
static int branch_and_cut(glp_prob *p, const struct gp_lp_limits *lim,
                          double t0, struct nodes *n)
{
    glp_iocp io;

    glp_init_iocp(&io);
    io.msg_lev = GLP_MSG_OFF;
    io.presolve = GLP_OFF;
    io.cb_func = count_nodes;
    io.cb_info = n;
    if (lim && lim->seconds > 0) {
        double left = lim->seconds - (gp__lp_now() - t0);

        io.tm_lim = to_ms(left > 0 ? left : 0.001);
    }
    return glp_intopt(p, &io);
}

/* The problem in GLPK's terms; NULL without memory. */
static glp_prob *build(const struct gp_lp *lp)
{
    glp_prob *p = glp_create_prob();
    int *ia = malloc((lp->nnz + 1) * sizeof(int));
    int *ja = malloc((lp->nnz + 1) * sizeof(int));
    double *ar = malloc((lp->nnz + 1) * sizeof(double));

    if (!ia || !ja || !ar) {
        free(ia);
        free(ja);
        free(ar);
        glp_delete_prob(p);
        return NULL;
    }
    glp_set_obj_dir(p, lp->sense == GP_LP_MAXIMIZE ? GLP_MAX : GLP_MIN);
    if (lp->nrows)
        glp_add_rows(p, (int)lp->nrows);
    if (lp->ncols)
        glp_add_cols(p, (int)lp->ncols);
    for (size_t r = 0; r < lp->nrows; r++)
        glp_set_row_bnds(p, (int)r + 1, glpk_type(lp->row_lo[r], lp->row_hi[r]),
                         finite_or_zero(lp->row_lo[r]),
                         finite_or_zero(lp->row_hi[r]));
    for (size_t c = 0; c < lp->ncols; c++) {
        glp_set_col_bnds(p, (int)c + 1, glpk_type(lp->col_lo[c], lp->col_hi[c]),
                         finite_or_zero(lp->col_lo[c]),
                         finite_or_zero(lp->col_hi[c]));
        glp_set_obj_coef(p, (int)c + 1, lp->obj[c]);
        if (lp->integer[c])
            glp_set_col_kind(p, (int)c + 1, GLP_IV);
    }
    for (size_t r = 0, k = 0; r < lp->nrows; r++)
        for (size_t i = lp->row_start[r]; i < lp->row_start[r + 1]; i++) {
            k++;
            ia[k] = (int)r + 1;
            ja[k] = lp->row_col[i] + 1;
            ar[k] = lp->row_val[i];
        }
    glp_load_matrix(p, (int)lp->nnz, ia, ja, ar);
    free(ia);
    free(ja);
    free(ar);
    return p;
}

/* Which of GLPK's solutions a point is read from. */
enum from { FROM_SIMPLEX, FROM_MIP, FROM_INTERIOR };

/* The point GLPK holds (of the simplex, branch-and-cut or the interior
 * method). */
static int take(const struct gp_lp *lp, glp_prob *p, enum from from,
                struct gp_lp_result *out, struct gp_diag *diag)
{
    double *x = malloc((lp->ncols ? lp->ncols : 1) * sizeof(double));
    int rc;

    if (!x)
        return gp_diag_set(diag, GP_ENOMEM, "glpk", "out of memory");
    for (size_t c = 0; c < lp->ncols; c++)
        x[c] = from == FROM_MIP        ? glp_mip_col_val(p, (int)c + 1)
               : from == FROM_INTERIOR ? glp_ipt_col_prim(p, (int)c + 1)
                                       : glp_get_col_prim(p, (int)c + 1);
    rc = gp__lp_take_point(lp, x, out, diag);
    free(x);
    return rc;
}

/* The rows' duals of an LP's optimum (simplex or interior method). */
static int take_duals(const struct gp_lp *lp, glp_prob *p, enum from from,
                      struct gp_lp_result *out, struct gp_diag *diag)
{
    if (!lp->nrows)
        return GP_OK;
    if (!(out->duals = malloc(lp->nrows * sizeof(double))))
        return gp_diag_set(diag, GP_ENOMEM, "glpk", "out of memory");
    for (size_t r = 0; r < lp->nrows; r++)
        out->duals[r] = from == FROM_INTERIOR ? glp_ipt_row_dual(p, (int)r + 1)
                                              : glp_get_row_dual(p, (int)r + 1);
    return GP_OK;
}

static int glpk_solve(const struct gp_lp *lp, const struct gp_lp_limits *lim,
                      struct gp_lp_result *out, struct gp_diag *diag)
{
    glp_prob *p;
    glp_smcp sm;
    double t0;
    int ret, st, rc = GP_OK;

    memset(out, 0, sizeof(*out));
    out->solver = gp__solver_glpk.name;
    out->ncols = lp->ncols;
    out->nrows = lp->nrows;
    glp_term_out(GLP_OFF);
    if (!(p = build(lp)))
        return gp_diag_set(diag, GP_ENOMEM, "glpk", "out of memory");
    glp_init_smcp(&sm);
    sm.msg_lev = GLP_MSG_OFF;
    sm.presolve = GLP_OFF;
    if (lim && lim->iterations > 0 && !lp->nints)
        sm.it_lim = lim->iterations > INT_MAX ? INT_MAX : (int)lim->iterations;
    if (lim && lim->seconds > 0)
        sm.tm_lim = to_ms(lim->seconds);
    t0 = gp__lp_now();
    if (lim && lim->interior && !lp->nints) {
        glp_iptcp ip;

        glp_init_iptcp(&ip);
        ip.msg_lev = GLP_MSG_OFF;
        if (glp_interior(p, &ip) == 0 && glp_ipt_status(p) == GLP_OPT) {
            out->seconds = gp__lp_now() - t0;
            out->status = GP_LP_OPTIMAL;
            if ((rc = take(lp, p, FROM_INTERIOR, out, diag)) == GP_OK)
                rc = take_duals(lp, p, FROM_INTERIOR, out, diag);
            glp_delete_prob(p);
            return rc;
        }
        /* not an optimum: the simplex from scratch */
        glp_delete_prob(p);
        if (!(p = build(lp)))
            return gp_diag_set(diag, GP_ENOMEM, "glpk", "out of memory");
    }
    ret = glp_simplex(p, &sm);
    out->iterations = glp_get_it_cnt(p);
    st = glp_get_status(p);
    if (ret == GLP_EITLIM || ret == GLP_ETMLIM)
        out->status = GP_LP_LIMIT;
    else if (ret != 0)
        out->status = GP_LP_FAILED;
    else if (st == GLP_OPT)
        out->status = GP_LP_OPTIMAL;
    else if (st == GLP_NOFEAS || glp_get_prim_stat(p) == GLP_NOFEAS)
        out->status = GP_LP_INFEASIBLE;
    else if (st == GLP_UNBND || glp_get_dual_stat(p) == GLP_NOFEAS)
        out->status = GP_LP_UNBOUNDED;
    else
        out->status = GP_LP_FAILED;
    if (!lp->nints) {
        out->seconds = gp__lp_now() - t0;
        if (out->status == GP_LP_OPTIMAL || out->status == GP_LP_LIMIT)
            rc = take(lp, p, FROM_SIMPLEX, out, diag);
        if (rc == GP_OK && out->status == GP_LP_OPTIMAL)
            rc = take_duals(lp, p, FROM_SIMPLEX, out, diag);
    } else if (out->status == GP_LP_OPTIMAL) {
        /* branch and cut from the relaxation's optimum */
        struct nodes n = {.cap = lim ? lim->nodes : 0};

        ret = branch_and_cut(p, lim, t0, &n);
        out->seconds = gp__lp_now() - t0;
        out->iterations = glp_get_it_cnt(p);
        out->nodes = n.total;
        st = glp_mip_status(p);
        if (ret == 0 && st == GLP_OPT)
            out->status = GP_LP_OPTIMAL;
        else if (ret == 0 && st == GLP_NOFEAS)
            out->status = GP_LP_INFEASIBLE;
        else if (ret == GLP_ETMLIM || ret == GLP_ESTOP)
            out->status = GP_LP_LIMIT;
        else
            out->status = GP_LP_FAILED;
        if (st == GLP_OPT || st == GLP_FEAS)
            rc = take(lp, p, FROM_MIP, out, diag);
    } else if (out->status == GP_LP_UNBOUNDED) {
        /* an unbounded relaxation leaves the problem unbounded if it has
         * an integer point at all (rational data), infeasible if not:
         * branch and cut with no objective says which */
        struct nodes n = {.cap = lim && lim->nodes ? lim->nodes
                                                   : GP_LP_SETTLE_NODES};
        struct gp_lp_limits settle = {
            .seconds =
                lim && lim->seconds ? lim->seconds : GP_LP_SETTLE_SECONDS,
        };

        for (size_t c = 0; c < lp->ncols; c++)
            glp_set_obj_coef(p, (int)c + 1, 0.0);
        ret = glp_simplex(p, &sm);
        if (ret == 0 && glp_get_status(p) == GLP_OPT)
            ret = branch_and_cut(p, &settle, t0, &n);
        out->nodes = n.total;
        st = glp_mip_status(p);
        if (ret == 0 && (st == GLP_OPT || st == GLP_NOFEAS))
            out->status = st == GLP_OPT ? GP_LP_UNBOUNDED : GP_LP_INFEASIBLE;
        else if (ret == GLP_ETMLIM || ret == GLP_ESTOP || ret == GLP_EITLIM)
            out->status = GP_LP_LIMIT;
        else
            out->status = GP_LP_FAILED;
        out->seconds = gp__lp_now() - t0;
    } else {
        /* the relaxation settles it: infeasible, or a limit before an
         * integer point */
        out->seconds = gp__lp_now() - t0;
    }
    glp_delete_prob(p);
    if (rc != GP_OK)
        gp_lp_result_free(out);
    return rc;
}

const struct gp_solver_ops gp__solver_glpk = {
    .name = "glpk",
    .what = "GNU GLPK " STR(GLP_MAJOR_VERSION) "." STR(
        GLP_MINOR_VERSION) " (simplex; branch-and-cut)",
    .solve = glpk_solve,
};
