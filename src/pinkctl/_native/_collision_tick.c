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
 *    the other shape's distance outside that slab (its capsule's extent along the axis, a
 *    cylinder's own) is a bound too, and the larger is kept (two links meeting end to end). A box is also measured as it is, against the other
 *    shape's capsule (the segment's smallest signed distance to the box, by golden-section
 *    search on that convex function, less its Lipschitz constant times the last bracket,
 *    minus the radius), where that is not negative. Every bound is a lower bound of the
 *    signed distance, apart and in penetration (a shape inside another penetrates no deeper
 *    than they do);
 * 3. a pair may have a row when its bound is below margin + max(influence, least) + slack
 *    (least: the turning rows' zone for the pairs that get them). None: the tick is quiet.
 *
 * Bounds are kept from call to call (cache): a pair's distance changes only by the motion of
 * one shape relative to the other, at most sum_c R_c |dq_c| over the columns c that move
 * one shape and not the other (R_c the lever bound: no point moved by column c moves
 * faster), so a pair's bound less that sweep since it was computed is still a bound. The
 * pairs are grouped by those columns (patterns: one per pair of links, far fewer than
 * pairs), each pattern's sweep and influence distance computed once a call. A pair whose
 * kept bound clears its own threshold of the tick is not computed again; any change of
 * another joint (measured) computes every pair again.
 */
#include <math.h>
#include <stddef.h>

#include "_capsules.h"
#include "_geometry.h"
#include "_narrow.h"

#define dot3 pk_dot3

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
    int npatterns;            /* distinct rows of the pairs' columns */
    const int *pattern;       /* (npairs) each pair's row of pattern_columns */
    const double *pattern_columns; /* (npatterns, n) 1 where the column moves one shape of
                                      the pair, not the other */
    const double *margins;    /* (npairs) the pairs' margins, -inf: never checked */
    const double *least;      /* (npairs) the turning zone, or -inf */
    const int *slab;          /* (ngeom) 1: the shape lies between its segment's end planes */
    const int *box;           /* (ngeom) 1: a box */
    const double *box_frame;  /* (ngeom, 12) a box's placement in its joint's frame */
    const double *half;       /* (ngeom, 3) a box's half sides */
    double *box_world;        /* (ngeom, 12) work: a box's placement in the world */
    const int *first;         /* (ngeom + 1) a convex shape's vertices: first[g] .. first[g+1] */
    const double *vertices;   /* (first[ngeom], 3) in their joint's frame */
    double *lower, *upper;    /* (n) work: the box */
    double *travel;           /* (n) work */
    double *zone;             /* (npairs) out: influence distance beyond the margin [m] */
    double *bound;            /* (npairs) out: lower bound of the signed distance [m] */
    int cache;                /* keep bounds from call to call (1-DoF controlled joints) */
    int primed;               /* last_q holds the previous call's configuration */
    double *last_q;           /* (nq) work */
    double *step;             /* (n) work: R_c |dq_c| since the last call [m] */
    double *swept;            /* (npatterns) work: each pattern's motion bound accumulated
                                 over the calls [m] */
    double *swept_at;         /* (npairs) work: swept when each bound was computed */
    double *pattern_zone;     /* (npatterns) work: each pattern's influence distance [m],
                                 uncapped */
    /* the near pairs' rows (near_rows below): on with rows */
    int rows;                 /* 1: a pair the bound cannot clear is decided by its row */
    const int *slot_column;   /* (nj) the controlled column of each joint slot, or -1 */
    double *distance;         /* (npairs) out: GJK's distance [m] of the pairs measured on
                                 this call, NAN for the others */
    double *lower_distance;   /* (npairs) out: GJK's proved lower bound of it [m] */
    double *points;           /* (npairs, 6) out: witness points on a, on b (world) */
    double *normal;           /* (npairs, 3) out: unit normal from a toward b */
    double *row;              /* (npairs, n) out: G = -d(distance)/dq over the columns */
    double *rhs;              /* (npairs) out: h [m] of the row (NAN: none computed) */
    double *direction;        /* (npairs, 3) work: GJK's last direction, b toward a */
    int *flagged;             /* (npairs) out: 1 for each pair counted (it may have a row:
                                 the Python path measures only these), 0 for the others */
    const double *drift;      /* (nq) bound [m] of a point's motion per unit change of each
                                 coordinate no column controls (0 for the controlled ones;
                                 inf: any change computes every bound again) */
    const int *moving;        /* (npairs) 1 for a pair whose obstacle moves this tick: never
                                 decided by its row (the Python path tightens it by the
                                 obstacle's motion) */
    const double *approach;   /* (npairs) added to each pair's influence distance [m]: its
                                 moving obstacle's anticipated motion (0 for the others) */
} CollisionTick;

unsigned long pk_collision_tick_size(void) { return (unsigned long)sizeof(CollisionTick); }

static double lesser(double a, double b) { return a < b ? a : b; }
static double greater(double a, double b) { return a > b ? a : b; }

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
        double lo = (lesser(t->lower_limit[c], x) - x) / t->dt;
        double up = (greater(t->upper_limit[c], x) - x) / t->dt;
        t->lower[c] = greater(-v, lo);
        t->upper[c] = lesser(v, up);
    }
}

/* each column's travel before a stop (lever times distance) */
static void travels(const CollisionTick *t) {
    for (int c = 0; c < t->n; ++c) {
        double speed = greater(fabs(t->lower[c]), fabs(t->upper[c]));
        double travel = speed * t->tau;
        if (t->braking != NULL) travel += speed * speed / (2.0 * t->braking[c]);
        t->travel[c] = isfinite(travel) ? t->levers[c] * travel : 1e9;
    }
}

/* how far each column moved a geometry point since the last call (bound) [m], into step,
 * and the joints no column controls (a measured finger or head that drifts), summed into
 * *others: every pair may see that motion; 0 when every bound must be computed again (a
 * joint without a drift bound moved, or the first call, or without the cache) */
static int motion(CollisionTick *t, double *others) {
    const double *q = t->capsules->q;
    double *last = t->last_q;
    int kept = t->primed && t->cache;
    if (kept)
        for (int c = 0; c < t->n; ++c) {
            int i = t->q_index[c];
            t->step[c] = t->levers[c] * fabs(q[i] - last[i]);
            last[i] = q[i];
        }
    *others = 0.0;
    for (int i = 0; i < t->nq; ++i) {
        if (q[i] != last[i]) *others += t->drift[i] * fabs(q[i] - last[i]);
        last[i] = q[i];
    }
    if (!isfinite(*others)) kept = 0;
    t->primed = 1;
    return kept;
}

/* each pattern's influence distance (CollisionAvoidance.influence) and, when kept, the
 * sweep of its columns added to its motion since the bounds were computed (else reset) */
static void patterns(CollisionTick *t, int kept, double others) {
    for (int g = 0; g < t->npatterns; ++g) {
        const double *row = t->pattern_columns + (long)g * t->n;
        double reach = t->buffer, sweep = others;
        for (int c = 0; c < t->n; ++c) {
            reach += row[c] * t->travel[c];
            if (kept) sweep += row[c] * t->step[c];
        }
        t->pattern_zone[g] = reach; /* capped per pair, with its approach */
        t->swept[g] = kept ? t->swept[g] + sweep : 0.0;
    }
}

/* the distance of shape h outside g's slab (the planes of g's segment's ends): h's extent
 * along g's axis is its segment's, plus its radius (a cylinder's rim: less when tilted);
 * negative where they overlap along the axis (then a bound of the penetration too) */
static double slab_bound(const CollisionTick *t, int g, int h) {
    const CapsuleProblem *p = t->capsules;
    const double *e = p->ends + 6 * g, *f = p->ends + 6 * h;
    double axis[3], centres[3], half[3];
    for (int i = 0; i < 3; ++i) {
        axis[i] = e[3 + i] - e[i];
        centres[i] = 0.5 * (f[3 + i] + f[i]) - 0.5 * (e[3 + i] + e[i]);
        half[i] = 0.5 * (f[3 + i] - f[i]);
    }
    double length = sqrt(dot3(axis, axis));
    if (length <= 0.0) return -INFINITY;
    double along = fabs(dot3(axis, half)) / length, radial = p->radius[h];
    double extent = dot3(half, half);
    if (t->slab[h] && extent > 0.0) { /* a cylinder: its rim's extent along the axis */
        double cosine = along / sqrt(extent);
        radial *= sqrt(greater(0.0, 1.0 - cosine * cosine));
    }
    return fabs(dot3(axis, centres)) / length - along - radial - 0.5 * length;
}

/* world placements of the boxes (rotation row-major, translation) */
static void place_boxes(const CollisionTick *t) {
    const CapsuleProblem *p = t->capsules;
    for (int g = 0; g < p->ngeom; ++g) {
        if (!t->box[g]) continue;
        pk_compose(p->frames + 12 * p->slot[g], t->box_frame + 12 * g, t->box_world + 12 * g);
    }
}

/* signed distance of a point (box frame) to a box of half sides h */
static double box_point(const double *x, const double *h) {
    double outside = 0.0, inside = -INFINITY;
    for (int i = 0; i < 3; ++i) {
        double d = fabs(x[i]) - h[i];
        if (d > 0.0) outside += d * d;
        inside = greater(inside, d);
    }
    return outside > 0.0 ? sqrt(outside) : lesser(inside, 0.0);
}

/* lower bound of the smallest signed distance of segment [e, e + 3] to box g (world) */
static double box_segment(const CollisionTick *t, int g, const double *e) {
    const double *w = t->box_world + 12 * g, *h = t->half + 3 * g;
    double a[3], b[3]; /* the ends in the box's frame */
    for (int j = 0; j < 3; ++j) {
        a[j] = b[j] = 0.0;
        for (int i = 0; i < 3; ++i) {
            a[j] += w[3 * i + j] * (e[i] - w[9 + i]);
            b[j] += w[3 * i + j] * (e[3 + i] - w[9 + i]);
        }
    }
    double d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    double length = sqrt(dot3(d, d));
    double x[3];
#define AT(s) (x[0] = a[0] + (s) * d[0], x[1] = a[1] + (s) * d[1], x[2] = a[2] + (s) * d[2], \
               box_point(x, h))
    if (length <= 0.0) return AT(0.0);
    const double ratio = 0.6180339887498949;
    double lo = 0.0, hi = 1.0;
    double c = hi - ratio * (hi - lo), u = lo + ratio * (hi - lo);
    double fc = AT(c), fu = AT(u);
    for (int i = 0; i < 40; ++i) { /* the minimum of a convex function stays in [lo, hi] */
        if (fc <= fu) {
            hi = u, u = c, fu = fc;
            c = hi - ratio * (hi - lo);
            fc = AT(c);
        } else {
            lo = c, c = u, fc = fu;
            u = lo + ratio * (hi - lo);
            fu = AT(u);
        }
    }
#undef AT
    return lesser(fc, fu) - length * (hi - lo);
}

/* the box bound of a pair (a box's own signed distance to the other's capsule), -inf where
 * there is none or it is negative (in penetration only the capsules' bound holds) */
static double box_bound(const CollisionTick *t, int a, int b) {
    const CapsuleProblem *p = t->capsules;
    double bound = -INFINITY;
    if (t->box[a]) bound = box_segment(t, a, p->ends + 6 * b) - p->radius[b];
    if (t->box[b]) bound = greater(bound, box_segment(t, b, p->ends + 6 * a) - p->radius[a]);
    return bound >= 0.0 ? bound : -INFINITY;
}

/* support of geometry g in direction n (its shape's exact one for a box or a cylinder, its
 * capsule's otherwise): writes the farthest point, returns n . point */
static double support(const CollisionTick *t, int g, const double *n, double *point) {
    const CapsuleProblem *p = t->capsules;
    if (t->first[g + 1] > t->first[g]) { /* a convex shape: its farthest vertex */
        const double *f = p->frames + 12 * p->slot[g], *hull = t->vertices + 3 * t->first[g];
        double local[3];
        pk_unrotate(f, n, local);
        pk_place(f, hull + 3 * pk_farthest_vertex(hull, t->first[g + 1] - t->first[g], local),
                 point);
        return dot3(n, point);
    }
    if (t->box[g]) {
        pk_box_support(t->box_world + 12 * g, t->half + 3 * g, n, point);
        return dot3(n, point);
    }
    const double *e = p->ends + 6 * g;
    double half[3], radial[3];
    for (int i = 0; i < 3; ++i) half[i] = 0.5 * (e[3 + i] - e[i]);
    double along = dot3(n, half), sign = along >= 0.0 ? 1.0 : -1.0;
    for (int i = 0; i < 3; ++i) {
        point[i] = 0.5 * (e[3 + i] + e[i]) + sign * half[i];
        radial[i] = n[i];
    }
    double extent = dot3(half, half);
    if (t->slab[g] && extent > 0.0) /* a cylinder: the rim, across the axis only */
        for (int i = 0; i < 3; ++i) radial[i] -= along / extent * half[i];
    double norm = sqrt(dot3(radial, radial));
    if (norm > 0.0)
        for (int i = 0; i < 3; ++i) point[i] += p->radius[g] * radial[i] / norm;
    return dot3(n, point);
}

/* min_b n.x - max_a n.x for a unit n from a toward b: a bound of the signed distance
 * (apart: the gap along n; in penetration: minus the overlap along n, which a translation
 * along n undoes); the support points in pa, pb */
static double gap_along(const CollisionTick *t, int a, int b, const double *n, double *pa,
                        double *pb) {
    double minus[3] = {-n[0], -n[1], -n[2]};
    return -support(t, b, minus, pb) - support(t, a, n, pa);
}

static int unit(double *n) {
    double norm = sqrt(dot3(n, n));
    if (!(norm > 0.0)) return 0;
    for (int i = 0; i < 3; ++i) n[i] /= norm;
    return 1;
}

/* separating-axis bounds: from the capsules' centres' direction, toward the last support
 * points (a few steps), then a search over nearby directions; the largest is kept */
static double axis_bound(const CollisionTick *t, int a, int b, double threshold) {
    const CapsuleProblem *p = t->capsules;
    const double *ea = p->ends + 6 * a, *eb = p->ends + 6 * b;
    double n[3], best_n[3], pa[3], pb[3];
    for (int i = 0; i < 3; ++i) n[i] = 0.5 * (eb[i] + eb[3 + i] - ea[i] - ea[3 + i]);
    double best = -INFINITY;
    for (int step = 0; step < 4 && unit(n); ++step) {
        double gap = gap_along(t, a, b, n, pa, pb);
        if (gap > best) {
            best = gap;
            for (int i = 0; i < 3; ++i) best_n[i] = n[i];
        }
        if (best >= threshold) return best;
        for (int i = 0; i < 3; ++i) n[i] = pb[i] - pa[i];
    }
    if (best == -INFINITY) return best;
    for (double angle = 0.2; angle > 0.002; angle *= 0.5) {
        /* two tangents of the best direction */
        double u[3] = {0.0, 0.0, 0.0}, v[3];
        u[fabs(best_n[0]) < 0.6 ? 0 : 1] = 1.0;
        double along = dot3(u, best_n);
        for (int i = 0; i < 3; ++i) u[i] -= along * best_n[i];
        unit(u);
        v[0] = best_n[1] * u[2] - best_n[2] * u[1];
        v[1] = best_n[2] * u[0] - best_n[0] * u[2];
        v[2] = best_n[0] * u[1] - best_n[1] * u[0];
        for (int k = 0; k < 4; ++k) {
            const double *dir = k < 2 ? u : v;
            double sign = (k % 2) ? -angle : angle;
            for (int i = 0; i < 3; ++i) n[i] = best_n[i] + sign * dir[i];
            unit(n);
            double gap = gap_along(t, a, b, n, pa, pb);
            if (gap > best) {
                best = gap;
                for (int i = 0; i < 3; ++i) best_n[i] = n[i];
                angle *= 2.0; /* the same size again from there */
                break;
            }
        }
        if (best >= threshold) break;
    }
    return best;
}

static double pair_bound(const CollisionTick *t, int a, int b, double threshold) {
    const CapsuleProblem *p = t->capsules;
    const double *ea = p->ends + 6 * a;
    if (p->plane[b]) { /* the lowest point of a's shape (a box's, a cylinder's, a convex
                          shape's own) above the plane */
        const double *n = p->segment + 6 * b;
        double bound = lesser(dot3(n, ea), dot3(n, ea + 3)) - n[3] - p->radius[a];
        if (bound < threshold && (t->box[a] || t->slab[a] || t->first[a + 1] > t->first[a])) {
            double down[3] = {-n[0], -n[1], -n[2]}, point[3];
            bound = greater(bound, -support(t, a, down, point) - n[3]);
        }
        return bound;
    }
    const double *eb = p->ends + 6 * b;
    double w[3];
    for (int i = 0; i < 3; ++i) w[i] = 0.5 * (ea[i] + ea[3 + i] - eb[i] - eb[3 + i]);
    double spheres = sqrt(dot3(w, w)) - p->reach[a] - p->reach[b];
    if (spheres >= threshold) return spheres; /* most pairs end here */
    double bound =
        pk_segment_distance(ea, ea + 3, eb, eb + 3) - p->radius[a] - p->radius[b];
    if (bound < threshold && t->slab[a]) bound = greater(bound, slab_bound(t, a, b));
    if (bound < threshold && t->slab[b]) bound = greater(bound, slab_bound(t, b, a));
    if (t->rows && p->shape[a] != SHAPE_OTHER && p->shape[b] != SHAPE_OTHER)
        return bound; /* GJK's proved bound follows (near_quiet) */
    if (bound < threshold && (t->box[a] || t->box[b])) bound = greater(bound, box_bound(t, a, b));
    if (bound < threshold) bound = greater(bound, axis_bound(t, a, b, threshold));
    return bound;
}

/* row[c] += sign n . d(point)/dq_c for a point fixed to geometry g's joint (the chain's
 * controlled columns: a revolute one w . ((point - o) x n), a prismatic one n . w) */
static void point_rate(const CollisionTick *t, int g, const double *point, const double *n,
                       double sign, double *row) {
    const CapsuleProblem *p = t->capsules;
    for (int f = p->slot[g]; f > 0; f = p->parent[f - 1]) {
        const int s = f - 1, c = t->slot_column[s];
        if (c < 0) continue;
        const double *m = p->frames + 12 * f, *u = p->axis + 3 * s;
        double w[3], r[3], moment[3];
        for (int i = 0; i < 3; ++i) w[i] = m[3 * i] * u[0] + m[3 * i + 1] * u[1] + m[3 * i + 2] * u[2];
        double rate;
        if (p->kind[s] == 1) {
            rate = dot3(n, w);
        } else {
            for (int i = 0; i < 3; ++i) r[i] = point[i] - m[9 + i];
            moment[0] = r[1] * n[2] - r[2] * n[1];
            moment[1] = r[2] * n[0] - r[0] * n[2];
            moment[2] = r[0] * n[1] - r[1] * n[0];
            rate = dot3(w, moment);
        }
        row[c] += sign * p->scale[s] * rate;
    }
}

/* GJK's distance of pair k (a half-space: the lowest point of a), its witness points and
 * normal and its row G = -d(distance)/dq (into t's outputs); 0 when the kernel cannot
 * measure it (a shape it does not know, touching or overlapping shapes: coal's part) */
static int measure(CollisionTick *t, int k, double enough) {
    const CapsuleProblem *p = t->capsules;
    const int a = p->pairs[2 * k], b = p->pairs[2 * k + 1];
    if (p->shape[a] == SHAPE_OTHER || (!p->plane[b] && p->shape[b] == SHAPE_OTHER)) return 0;
    double *wa = t->points + 6 * k, *wb = wa + 3, *n = t->normal + 3 * k, d, low;
    PkShape sa, sb;
    pk_capsule_shape(p, a, (struct PkShape *)&sa);
    if (p->plane[b]) {
        const double *up = p->segment + 6 * b;
        double down[3] = {-up[0], -up[1], -up[2]};
        pk_shape_support(&sa, down, wa);
        low = d = dot3(up, wa) - up[3];
        for (int i = 0; i < 3; ++i) {
            n[i] = down[i];
            wb[i] = wa[i] - d * up[i];
        }
    } else {
        pk_capsule_shape(p, b, (struct PkShape *)&sb);
        d = pk_shapes_distance(&sa, &sb, t->direction + 3 * k, enough, wa, wb, &low);
        for (int i = 0; i < 3; ++i) t->direction[3 * k + i] = wa[i] - wb[i];
        if (!(d > 1e-9)) return 0;
        for (int i = 0; i < 3; ++i) n[i] = (wb[i] - wa[i]) / d;
    }
    if (!(d > 0.0)) return 0;
    t->distance[k] = d;
    t->lower_distance[k] = low;
    double *row = t->row + (long)k * t->n;
    for (int c = 0; c < t->n; ++c) row[c] = 0.0;
    point_rate(t, a, wa, n, 1.0, row);
    if (!p->plane[b]) point_rate(t, b, wb, n, -1.0, row);
    return 1;
}

/* 1 when the row G (over the columns) of a gap [m] cannot bind inside the shaper's box
 * (CollisionLimit's closing rate and _boxed, by a tolerance); h into *rhs */
static int row_quiet(const CollisionTick *t, const double *row, double gap, double *rhs) {
    double braking = 0.0, most = 0.0, least = 0.0;
    for (int c = 0; c < t->n; ++c) {
        const double low = row[c] * t->lower[c], high = row[c] * t->upper[c];
        if (!isfinite(low) || !isfinite(high)) return 0;
        most += greater(low, high);
        least += lesser(low, high);
        if (t->braking != NULL && isfinite(t->braking[c])) braking += fabs(row[c]) * t->braking[c];
    }
    double rate = gap / t->tau;
    if (t->braking != NULL && gap > 0.0 && braking > 0.0)
        rate = braking * (sqrt(t->tau * t->tau + 2.0 * gap / braking) - t->tau);
    const double h = greater(t->dt * rate, t->dt * least + 1e-9);
    *rhs = h;
    most *= t->dt;
    return h >= most + 1e-9 + 1e-6 * fabs(most);
}

#define RIM 8 /* a cylinder's rim points per end (CollisionLimit's corners) */

/* the corners start .. start + max - 1 of a placed shape (CollisionLimit's corners: a
 * capsule's end spheres, a cylinder's rims, a box's corners, a hull's vertices) as small
 * shapes; returns how many (0 past the last) */
static int corner_shapes(const PkShape *s, PkShape *out, double *radius, int start, int max) {
    *radius = s->kind == SHAPE_CAPSULE ? s->param[0] : 0.0;
    double local[3], at[3];
    int count = 0;
    const int total = s->kind == SHAPE_CAPSULE    ? 2
                      : s->kind == SHAPE_CYLINDER ? 2 * RIM
                      : s->kind == SHAPE_BOX      ? 8
                      : s->kind == SHAPE_CONVEX   ? s->npoints
                                                  : 0;
    const int end = total - start < max ? total : start + max;
    for (int i = start; i < end; ++i) {
        const double *k = s->param;
        if (s->kind == SHAPE_CAPSULE) {
            local[0] = local[1] = 0.0;
            local[2] = i ? -k[1] : k[1];
        } else if (s->kind == SHAPE_CYLINDER) {
            const double angle = 6.283185307179586 * (i % RIM) / RIM;
            local[0] = k[0] * cos(angle);
            local[1] = k[0] * sin(angle);
            local[2] = i < RIM ? k[1] : -k[1];
        } else if (s->kind == SHAPE_BOX) {
            for (int j = 0; j < 3; ++j) local[j] = (i >> (2 - j)) & 1 ? k[j] : -k[j];
        } else {
            for (int j = 0; j < 3; ++j) local[j] = s->points[3 * i + j];
        }
        pk_place(s->m, local, at);
        PkShape *c = out + count++;
        c->kind = SHAPE_SPHERE;
        c->points = NULL;
        c->npoints = 0;
        c->adj_start = c->adj = NULL;
        c->warm = NULL;
        for (int j = 0; j < 12; ++j) c->m[j] = (j == 0 || j == 4 || j == 8) ? 1.0 : 0.0;
        for (int j = 0; j < 3; ++j) c->m[9 + j] = at[j];
    }
    return count;
}

/* 1 when no corner row of pair k can bind (each corner of either shape within the turning
 * zone of the margin: its own distance to the other shape, bounded like the pair's); 0 when
 * one may, or a corner touches the other shape (coal's part) */
static int corners_quiet(CollisionTick *t, int k) {
    const CapsuleProblem *p = t->capsules;
    const int a = p->pairs[2 * k], b = p->pairs[2 * k + 1];
    PkShape shapes[2], corner[64];
    double row[t->n], rhs;
    pk_capsule_shape(p, a, (struct PkShape *)&shapes[0]);
    if (!p->plane[b]) pk_capsule_shape(p, b, (struct PkShape *)&shapes[1]);
    for (int side = 0, start = 0, count; side < (p->plane[b] ? 1 : 2); ++side, start = 0) {
        double r = 0.0;
        /* 64 corners at a time (a hull's vertices: hundreds) */
        for (; (count = corner_shapes(&shapes[side], corner, &r, start, 64)) > 0; start += count)
            for (int i = 0; i < count; ++i) {
                double param[3] = {r, 0.0, 0.0}, wc[3], wo[3], n[3], d, low;
                corner[i].param = param;
                if (p->plane[b]) {
                    const double *up = p->segment + 6 * b;
                    low = d = dot3(up, corner[i].m + 9) - up[3] - r;
                    for (int j = 0; j < 3; ++j) {
                        wc[j] = corner[i].m[9 + j] - r * up[j];
                        wo[j] = wc[j] - d * up[j];
                    }
                } else {
                    const double *e = p->ends + 6 * (side ? a : b), *at = corner[i].m + 9;
                    const double capsule = pk_segment_distance(at, at, e, e + 3) - r -
                                           p->radius[side ? a : b]; /* the other's capsule */
                    if (capsule - t->margins[k] - 1e-9 >= t->least[k]) continue;
                    d = pk_shapes_distance(&corner[i], &shapes[1 - side], NULL,
                                           t->margins[k] + t->least[k], wc, wo, &low);
                    if (!(d > 1e-9)) return 0;
                }
                const double gap = low - t->margins[k] - 1e-9;
                if (gap >= t->least[k]) continue;
                /* from a's point toward b's */
                const double *pa = side ? wo : wc, *pb = side ? wc : wo;
                for (int j = 0; j < 3; ++j) n[j] = (pb[j] - pa[j]) / d;
                for (int c = 0; c < t->n; ++c) row[c] = 0.0;
                point_rate(t, a, pa, n, 1.0, row);
                if (!p->plane[b]) point_rate(t, b, pb, n, -1.0, row);
                if (!row_quiet(t, row, gap, &rhs)) return 0;
            }
    }
    return 1;
}

/* 1 when pair k surely has no row this tick (CollisionLimit.evaluate's rule at GJK's lower
 * bound of the distance, a smaller gap than coal's: farther than its influence distance, or
 * rows the shaper's box cannot bind, by a tolerance); 0 when it may have one */
static int near_quiet(CollisionTick *t, int k) {
    t->distance[k] = t->rhs[k] = NAN;
    const double threshold = t->margins[k] + greater(t->zone[k], t->least[k]) + t->slack;
    if (!measure(t, k, threshold)) return 0;
    const double gap = t->lower_distance[k] - t->margins[k] - 1e-9;
    if (t->lower_distance[k] > t->bound[k]) t->bound[k] = t->lower_distance[k];
    if (t->lower_distance[k] >= threshold) { /* GJK stopped there: no distance, no row */
        t->distance[k] = NAN;
        return 1;
    }
    const int turning = gap < t->least[k];
    if (gap >= t->zone[k] + t->slack && !turning) return 1;
    if (!row_quiet(t, t->row + (long)k * t->n, gap, t->rhs + k)) return 0;
    return !turning || corners_quiet(t, k);
}

int pk_collision_quiet(CollisionTick *t, const double *measured, long nmeasured, int space,
                       const double *position, long nposition) {
    if (nmeasured != (space ? t->nspace : t->nq) || nposition != t->n) return -1;
    configuration(t, measured, space, position);
    box(t, position);
    travels(t);
    double others;
    const int kept = motion(t, &others);
    patterns(t, kept, others);
    CapsuleProblem *p = t->capsules;
    int count = 0, placed = 0;
    if (t->rows)
        for (int k = 0; k < p->npairs; ++k) t->distance[k] = NAN;
    for (int k = 0; k < p->npairs; ++k) {
        double margin = t->margins[k];
        t->flagged[k] = 0;
        if (margin == -INFINITY) {
            t->bound[k] = INFINITY;
            continue;
        }
        const int g = t->pattern[k];
        t->zone[k] = lesser(t->pattern_zone[g] + t->approach[k], t->cap);
        const double threshold = margin + greater(t->zone[k], t->least[k]) + t->slack;
        if (kept) { /* the bound kept, less the sweep since */
            t->bound[k] -= t->swept[g] - t->swept_at[k];
            t->swept_at[k] = t->swept[g];
            if (t->bound[k] >= threshold) continue;
        }
        if (!placed) {
            pk_capsule_ends(p);
            place_boxes(t);
            placed = 1;
        }
        t->bound[k] = pair_bound(t, p->pairs[2 * k], p->pairs[2 * k + 1], threshold);
        t->swept_at[k] = t->swept[g];
        if (t->bound[k] < threshold && !(t->rows && !t->moving[k] && near_quiet(t, k))) {
            t->flagged[k] = 1;
            ++count;
        }
    }
    return count;
}
