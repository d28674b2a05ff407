/*
 * The broad phase of the IK's collision check (pinkctl/ik/capsules.py fills the structure):
 * forward kinematics of the joints that carry geometry, then a lower bound of the distance
 * of every pair from bounding capsules, and the pairs whose bound is below the margin,
 * nearest first. Coal then measures only those (pinkctl/ik/collision.py).
 *
 * Every geometry is held by a capsule (a segment and a radius, in its joint's frame) or is a
 * half-space (an obstacle, in the world frame). The distance of two shapes is at least the
 * distance of their segments minus both radii; of a shape and a half-space, at least the
 * height of the segment's lower end above the plane minus the radius. Two geometries whose
 * spheres about their segments' middles (radius: half the segment plus the capsule's) are
 * the margin apart are not measured further; before that, the pairs are grouped by their two
 * joints, and a group whose two joints' spheres (each holding all that joint's capsules) are
 * the margin apart is skipped whole.
 *
 * Joints, in an order where a parent comes before its children (slot 0 is the universe, the
 * identity): revolute (angle scale * q[i] + offset about a unit axis), prismatic (the same
 * along the axis) and continuous ((cos, sin) at q[i], q[i + 1]), each after its fixed
 * placement in the parent's frame (rotation row-major, then translation).
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "_capsules.h"
#include "_geometry.h"
#include "_ik.h"
#include "_narrow.h"

#define compose pk_compose
#define apply pk_place
#define dot pk_dot3

unsigned long pk_capsule_problem_size(void) { return (unsigned long)sizeof(CapsuleProblem); }

/* local rotation about unit axis u by (c, s) */
static void axis_rotation(const double *u, double c, double s, double *r) {
    double t = 1.0 - c;
    r[0] = c + u[0] * u[0] * t;
    r[1] = u[0] * u[1] * t - u[2] * s;
    r[2] = u[0] * u[2] * t + u[1] * s;
    r[3] = u[1] * u[0] * t + u[2] * s;
    r[4] = c + u[1] * u[1] * t;
    r[5] = u[1] * u[2] * t - u[0] * s;
    r[6] = u[2] * u[0] * t - u[1] * s;
    r[7] = u[2] * u[1] * t + u[0] * s;
    r[8] = c + u[2] * u[2] * t;
}

/* frame = m rot(u, c, s): about a coordinate axis only two of m's rotation columns mix (the
 * joints of most arms), else Rodrigues' matrix; the translation is m's */
static void rotated(const double *m, const double *u, double c, double s, double *frame) {
    if (!pk_rotate_about_axis(m, u, c, s, frame)) {
        double motion[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}, r[12];
        axis_rotation(u, c, s, motion);
        compose(m, motion, r);
        for (int x = 0; x < 9; ++x) frame[x] = r[x];
    }
    for (int x = 9; x < 12; ++x) frame[x] = m[x];
}

/* each slot's world placement: its parent's, then its fixed placement, then its motion */
static void kinematics(const CapsuleProblem *p) {
    double *frames = p->frames;
    for (int k = 0; k < 12; ++k) frames[k] = (k == 0 || k == 4 || k == 8) ? 1.0 : 0.0;
    for (int s = 0; s < p->nj; ++s) {
        const double *u = p->axis + 3 * s;
        const double *q = p->q + p->q_index[s];
        double m[12];
        double *frame = frames + 12 * (s + 1);
        if (p->given != NULL && p->reuse[s] >= 0) { /* the IK's, computed alike */
            memcpy(frame, p->given + 12 * p->reuse[s], 12 * sizeof(double));
            continue;
        }
        compose(frames + 12 * p->parent[s], p->placement + 12 * s, m);
        if (p->kind[s] == 1) {
            const double x = p->scale[s] * q[0] + p->offset[s];
            for (int i = 0; i < 9; ++i) frame[i] = m[i];
            for (int i = 0; i < 3; ++i) frame[9 + i] = m[9 + i] + dot(m + 3 * i, u) * x;
        } else if (p->kind[s] == 2) {
            const double n = sqrt(q[0] * q[0] + q[1] * q[1]);
            rotated(m, u, n > 0 ? q[0] / n : 1.0, n > 0 ? q[1] / n : 0.0, frame);
        } else {
            const double angle = p->scale[s] * q[0] + p->offset[s];
            rotated(m, u, cos(angle), sin(angle), frame);
        }
    }
}

static double clamp01(double x) { return x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x); }

/* squared distance between segments [p1, q1] and [p2, q2] (closest points, clamped); w: the
 * vector from the second's closest point to the first's */
static double segment_squared(const double *p1, const double *q1, const double *p2,
                              const double *q2, double *w) {
    double d1[3], d2[3], r[3];
    for (int i = 0; i < 3; ++i) {
        d1[i] = q1[i] - p1[i];
        d2[i] = q2[i] - p2[i];
        r[i] = p1[i] - p2[i];
    }
    double a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, r);
    double s = 0.0, t = 0.0;
    const double eps = 1e-18;
    if (a <= eps && e <= eps) {
        s = t = 0.0;
    } else if (a <= eps) {
        t = clamp01(f / e);
    } else {
        double c = dot(d1, r);
        if (e <= eps) {
            s = clamp01(-c / a);
        } else {
            double b = dot(d1, d2), denom = a * e - b * b;
            s = denom > eps ? clamp01((b * f - c * e) / denom) : 0.0;
            t = (b * s + f) / e;
            if (t < 0.0) {
                t = 0.0;
                s = clamp01(-c / a);
            } else if (t > 1.0) {
                t = 1.0;
                s = clamp01((b - c) / a);
            }
        }
    }
    for (int i = 0; i < 3; ++i) w[i] = p1[i] + d1[i] * s - p2[i] - d2[i] * t;
    return dot(w, w);
}

/* whether the spheres of a group's two slots (or its slot's above its half-space) are the
 * margin apart: then so are all its pairs */
static int group_apart(const CapsuleProblem *p, int group) {
    const int sa = p->group_slot[2 * group], sb = p->group_slot[2 * group + 1];
    const double *ca = p->slot_centre + 3 * sa, ra = p->slot_sphere[4 * sa + 3];
    const int plane = p->group_plane[group];
    if (plane >= 0) {
        const double *n = p->segment + 6 * plane;
        return dot(n, ca) - n[3] - ra >= p->margin;
    }
    const double *cb = p->slot_centre + 3 * sb;
    const double reach = p->margin + ra + p->slot_sphere[4 * sb + 3];
    double w[3];
    for (int i = 0; i < 3; ++i) w[i] = ca[i] - cb[i];
    return dot(w, w) >= reach * reach;
}

/* the geometries pk_capsule_near has placed: their segment ends (in p->ends) and middles */
typedef struct Placed {
    unsigned char *done; /* (ngeom) 1 once placed */
    double *middle;      /* (ngeom, 3) */
} Placed;

/* geometry g's segment ends in the world frame (placed on first use: pk_capsule_near places
 * only the geometries of the groups its spheres cannot clear, about 60 % of franka's) */
static const double *ends_of(CapsuleProblem *p, Placed *w, int g) {
    double *e = p->ends + 6 * g;
    if (!w->done[g]) {
        const double *frame = p->frames + 12 * p->slot[g];
        double *m = w->middle + 3 * g;
        apply(frame, p->segment + 6 * g, e);
        apply(frame, p->segment + 6 * g + 3, e + 3);
        m[0] = 0.5 * (e[0] + e[3]);
        m[1] = 0.5 * (e[1] + e[4]);
        m[2] = 0.5 * (e[2] + e[5]);
        w->done[g] = 1;
    }
    return e;
}

/* pair k's bound; when below its threshold, k joins the count pairs of the list, which
 * stays sorted by bound. Returns the new count. */
static int near_pair(CapsuleProblem *p, Placed *w, int k, int count) {
    const int a = p->pairs[2 * k], b = p->pairs[2 * k + 1];
    const double *ea = ends_of(p, w, a);
    double bound;
    if (p->plane[b]) {
        const double *n = p->segment + 6 * b;
        const double h0 = dot(n, ea), h1 = dot(n, ea + 3);
        bound = (h0 < h1 ? h0 : h1) - n[3] - p->radius[a];
    } else {
        const double *eb = ends_of(p, w, b);
        /* the spheres about the segments' middles first: most pairs end there */
        const double reach = p->margin + p->reach[a] + p->reach[b];
        const double *ma = w->middle + 3 * a, *mb = w->middle + 3 * b;
        const double dx = ma[0] - mb[0], dy = ma[1] - mb[1], dz = ma[2] - mb[2];
        if (reach > 0.0 && dx * dx + dy * dy + dz * dz >= reach * reach) return count;
        /* the square root only for a pair that may be near */
        const double apart = p->pair_margin[k] + p->radius[a] + p->radius[b];
        const double d2 = segment_squared(ea, ea + 3, eb, eb + 3, p->direction + 3 * k);
        if (apart <= 0.0 || d2 >= apart * apart) return count;
        bound = sqrt(d2) - p->radius[a] - p->radius[b];
    }
    if (bound >= p->pair_margin[k]) return count;
    int i = count++;
    while (i > 0 && p->bound[i - 1] > bound) {
        p->bound[i] = p->bound[i - 1];
        p->near[i] = p->near[i - 1];
        --i;
    }
    p->bound[i] = bound;
    p->near[i] = k;
    return count;
}

double pk_segment_distance(const double *p1, const double *q1, const double *p2,
                           const double *q2) {
    double w[3];
    return sqrt(segment_squared(p1, q1, p2, q2, w));
}

void pk_capsule_ends(CapsuleProblem *p) {
    kinematics(p);
    for (int g = 0; g < p->ngeom; ++g) {
        if (p->plane[g]) continue;
        const double *frame = p->frames + 12 * p->slot[g];
        apply(frame, p->segment + 6 * g, p->ends + 6 * g);
        apply(frame, p->segment + 6 * g + 3, p->ends + 6 * g + 3);
    }
}

int pk_capsule_near(CapsuleProblem *p) {
    kinematics(p);
    unsigned char done[p->ngeom + 1];
    double middle[3 * p->ngeom + 3];
    memset(done, 0, (size_t)p->ngeom + 1);
    Placed work = {done, middle};
    for (int slot = 0; slot <= p->nj; ++slot)
        apply(p->frames + 12 * slot, p->slot_sphere + 4 * slot, p->slot_centre + 3 * slot);
    int count = 0;
    for (int group = 0; group < p->ngroups; ++group) {
        if (group_apart(p, group)) continue;
        for (int i = p->group_start[group]; i < p->group_start[group + 1]; ++i)
            count = near_pair(p, &work, p->order[i], count);
    }
    return count;
}

/* geometry g as a placed shape of _narrow.h (after pk_capsule_near's kinematics) */
static void placed(const CapsuleProblem *p, int g, PkShape *out) {
    out->kind = p->shape[g];
    out->param = p->shape_param + 3 * g;
    out->points = p->vertices + 3 * (ptrdiff_t)p->vert_start[g];
    out->npoints = p->vert_count[g];
    out->adj_start = p->climb[g] ? p->adj_start + p->vert_start[g] : NULL;
    out->adj = p->adj;
    out->warm = p->warm + g;
    compose(p->frames + 12 * p->slot[g], p->shape_placement + 12 * g, out->m);
}

void pk_capsule_shape(const CapsuleProblem *p, int g, PkShape *out) { placed(p, g, out); }

/* Whether every pair keeps its threshold at the configuration q: 1 yes, 0 no (p->hit: the
 * pair found too close), -1 undecided (a near pair has a shape the kernel does not know:
 * the caller measures them all). The pairs the capsules cannot clear, nearest first, are
 * decided by the narrow phase (_narrow.c: accepted only with a proof). */
int pk_capsule_free(CapsuleProblem *p, const double *q) {
    const double *given = p->q;
    p->q = q;
    const int count = pk_capsule_near(p);
    p->q = given;
    for (int i = 0; i < count; ++i) {
        const int k = p->near[i], a = p->pairs[2 * k], b = p->pairs[2 * k + 1];
        if (p->shape[a] == SHAPE_OTHER || (!p->plane[b] && p->shape[b] == SHAPE_OTHER)) return -1;
    }
    for (int i = 0; i < count; ++i) {
        const int k = p->near[i], a = p->pairs[2 * k], b = p->pairs[2 * k + 1];
        PkShape sa, sb;
        placed(p, a, &sa);
        int apart;
        if (p->plane[b]) {
            const double *n = p->segment + 6 * b;
            apart = pk_shape_lowest(&sa, n) - n[3] >= p->pair_margin[k];
        } else {
            placed(p, b, &sb);
            apart = pk_shapes_apart(&sa, &sb, p->pair_margin[k], p->direction + 3 * k);
        }
        if (!apart) {
            p->hit = k;
            return 0;
        }
    }
    return 1;
}

int pk_capsule_hit(const CapsuleProblem *p) { return p->hit; }

/* p->reuse against the IK chain of ik: a slot takes chain joint j's placement when both
 * compute it alike (the same coordinate, parent, placement and axis, a revolute joint
 * without scale or offset: the arithmetic of _ik.c's evaluate and of kinematics above is
 * the same, shared rotations of _geometry.h) */
static void match_chain(CapsuleProblem *p, const IKProblem *ik) {
    int next = 0; /* the chain joint the next matched slot must be */
    int last = 0; /* the slot matched to chain joint next - 1 (0: the universe) */
    for (int s = 0; s < p->nj; ++s) {
        p->reuse[s] = -1;
        if (next >= ik->nj || p->parent[s] != last || p->kind[s] != 0 ||
            ik->kind[next] != 0 || p->q_index[s] != ik->q_index[next] ||
            p->scale[s] != 1.0 || p->offset[s] != 0.0 ||
            memcmp(p->placement + 12 * s, ik->placement + 12 * next, 12 * sizeof(double)) ||
            memcmp(p->axis + 3 * s, ik->axis + 3 * next, 3 * sizeof(double)))
            continue;
        p->reuse[s] = next++;
        last = s + 1;
    }
    p->reuse_for = ik->serial;
}

/* pk_capsule_free at ik's converged configuration q (its last evaluation): the slots on
 * the IK's chain take its placements (p->reuse) instead of computing them again */
int pk_capsule_free_ik(CapsuleProblem *p, const double *q, const IKProblem *ik) {
    if (p->reuse == NULL || ik->frames == NULL || ik->serial <= 0) return pk_capsule_free(p, q);
    if (p->reuse_for != ik->serial) match_chain(p, ik);
    p->given = ik->frames;
    const int free = pk_capsule_free(p, q);
    p->given = NULL;
    return free;
}
