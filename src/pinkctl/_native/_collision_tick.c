/*
 * The controller's quiet-tick check (pinkctl/controllers/collision_check.py fills the
 * structure): whether no collision row can exist this tick, so that the tick runs exactly
 * as without avoidance (pinkctl/controllers/collision.py).
 *
 * At the command configuration (the controlled joints at the shaper's last command, the
 * others measured), for the shaper's velocity box of this tick:
 *
 * 1. each pair's influence distance beyond its margin (CollisionAvoidance.influence): the
 *    distance its shapes can close before they stop, sum_c R_c (V_c tau + V_c^2 / (2 b_c))
 *    over the columns c that move one shape and not the other (R_c the lever bound, V_c the
 *    box's speed bound, b_c the braking deceleration), plus a buffer, at most a cap;
 * 2. a lower bound of each pair's signed distance from the capsules of _capsules.h (each
 *    shape inside its capsule: the segments' distance minus both radii; a half-space: the
 *    lower end's height minus the radius). A cylinder also lies between its end planes:
 *    the other capsule's distance outside that slab is a bound too, and the larger is kept
 *    (two links meeting end to end). Every bound is a lower bound of the signed distance,
 *    apart and in penetration (a shape inside another penetrates no deeper than they do);
 * 3. a pair may have a row when its bound is below margin + max(influence, least) + slack
 *    (least: the turning rows' zone for the pairs that get them). None: the tick is quiet.
 */
#include <math.h>
#include <stddef.h>

#include "_capsules.h"

struct Kernel;
int pk_bounds(struct Kernel *k, double *lower, double *upper);

typedef struct CollisionTick {
    CapsuleProblem *capsules; /* the pairs, geometry and kinematics; capsules->q is written */
    struct Kernel *kernel;    /* the native shaper (its box), or NULL: the plain box below */
    int n;                    /* controlled columns */
    int nq;
    int nspace;               /* joint-space entries of a measured joint row */
    const int *q_index;       /* (n) configuration index of each controlled joint */
    const int *space_q;       /* (nspace) configuration index of each entry, -1: none */
    const double *q_home;     /* (nq) joints a measured row omits */
    const double *velocity_limit; /* (n) the plain box: speed limits */
    const double *lower_limit;    /* (n) position limits */
    const double *upper_limit;    /* (n) */
    double dt, tau, buffer, cap, slack;
    const double *braking;    /* (n) braking deceleration per column; NULL: speeds * tau */
    const double *levers;     /* (n) */
    const double *columns;    /* (npairs, n) 1 where the column moves one shape, not the other */
    const double *margins;    /* (npairs) the pairs' margins, -inf: never checked */
    const double *least;      /* (npairs) the turning zone, or -inf */
    const int *slab;          /* (ngeom) 1: the shape lies between its segment's end planes */
    double *lower, *upper;    /* (n) work: the box */
    double *travel;           /* (n) work */
    double *zone;             /* (npairs) out: influence distance beyond the margin [m] */
    double *bound;            /* (npairs) out: lower bound of the signed distance [m] */
} CollisionTick;

unsigned long pk_collision_tick_size(void) { return (unsigned long)sizeof(CollisionTick); }

static double dot3(const double *a, const double *b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void configuration(const CollisionTick *t, const double *measured, int space,
                          const double *position) {
    double *q = (double *)t->capsules->q;
    if (space) {
        for (int i = 0; i < t->nq; ++i) q[i] = t->q_home[i];
        for (int j = 0; j < t->nspace; ++j)
            if (t->space_q[j] >= 0) q[t->space_q[j]] = measured[j];
    } else {
        for (int i = 0; i < t->nq; ++i) q[i] = measured[i];
    }
    for (int c = 0; c < t->n; ++c) q[t->q_index[c]] = position[c];
}

static void box(const CollisionTick *t, const double *position) {
    if (t->kernel != NULL) {
        pk_bounds(t->kernel, t->lower, t->upper);
        return;
    }
    for (int c = 0; c < t->n; ++c) { /* MotionShaper.box without a filter */
        double x = position[c], v = t->velocity_limit[c];
        double lo = (fmin(t->lower_limit[c], x) - x) / t->dt;
        double up = (fmax(t->upper_limit[c], x) - x) / t->dt;
        t->lower[c] = fmax(-v, lo);
        t->upper[c] = fmin(v, up);
    }
}

static void influence(const CollisionTick *t) {
    for (int c = 0; c < t->n; ++c) {
        double speed = fmax(fabs(t->lower[c]), fabs(t->upper[c]));
        double travel = speed * t->tau;
        if (t->braking != NULL) travel += speed * speed / (2.0 * t->braking[c]);
        t->travel[c] = isfinite(travel) ? t->levers[c] * travel : 1e9;
    }
    int npairs = t->capsules->npairs;
    for (int k = 0; k < npairs; ++k) {
        const double *row = t->columns + (long)k * t->n;
        double reach = t->buffer;
        for (int c = 0; c < t->n; ++c) reach += row[c] * t->travel[c];
        t->zone[k] = fmin(reach, t->cap);
    }
}

/* the distance outside g's slab of the capsule of h (-inf where h's segment crosses it) */
static double slab_bound(const CapsuleProblem *p, int g, int h) {
    const double *e = p->ends + 6 * g, *f = p->ends + 6 * h;
    double axis[3], mid[3];
    for (int i = 0; i < 3; ++i) {
        axis[i] = e[3 + i] - e[i];
        mid[i] = 0.5 * (e[3 + i] + e[i]);
    }
    double length = sqrt(dot3(axis, axis));
    if (length <= 0.0) return -INFINITY;
    double s0 = 0.0, s1 = 0.0;
    for (int i = 0; i < 3; ++i) {
        s0 += axis[i] * (f[i] - mid[i]);
        s1 += axis[i] * (f[3 + i] - mid[i]);
    }
    s0 /= length;
    s1 /= length;
    if ((s0 > 0.0) != (s1 > 0.0) || s0 == 0.0) return -INFINITY;
    return fmin(fabs(s0), fabs(s1)) - 0.5 * length - p->radius[h];
}

static double pair_bound(const CollisionTick *t, int a, int b, double threshold) {
    const CapsuleProblem *p = t->capsules;
    const double *ea = p->ends + 6 * a;
    if (p->plane[b]) {
        const double *n = p->segment + 6 * b;
        return fmin(dot3(n, ea), dot3(n, ea + 3)) - n[3] - p->radius[a];
    }
    const double *eb = p->ends + 6 * b;
    double w[3];
    for (int i = 0; i < 3; ++i) w[i] = 0.5 * (ea[i] + ea[3 + i] - eb[i] - eb[3 + i]);
    double spheres = sqrt(dot3(w, w)) - p->reach[a] - p->reach[b];
    if (spheres >= threshold) return spheres; /* most pairs end here */
    double bound =
        pk_segment_distance(ea, ea + 3, eb, eb + 3) - p->radius[a] - p->radius[b];
    if (bound < threshold && t->slab[a]) bound = fmax(bound, slab_bound(p, a, b));
    if (bound < threshold && t->slab[b]) bound = fmax(bound, slab_bound(p, b, a));
    return bound;
}

int pk_collision_quiet(CollisionTick *t, const double *measured, long nmeasured, int space,
                       const double *position, long nposition) {
    if (nmeasured != (space ? t->nspace : t->nq) || nposition != t->n) return -1;
    configuration(t, measured, space, position);
    box(t, position);
    influence(t);
    CapsuleProblem *p = t->capsules;
    pk_capsule_ends(p);
    int count = 0;
    for (int k = 0; k < p->npairs; ++k) {
        double margin = t->margins[k];
        if (margin == -INFINITY) {
            t->bound[k] = INFINITY;
            continue;
        }
        double threshold = margin + fmax(t->zone[k], t->least[k]) + t->slack;
        t->bound[k] = pair_bound(t, p->pairs[2 * k], p->pairs[2 * k + 1], threshold);
        count += t->bound[k] < threshold;
    }
    return count;
}
