/*
 * The narrow phase of the IK's collision check (_narrow.c): whether two convex shapes placed
 * in the world are at least a distance apart, proved by a separating direction.
 */
#ifndef PINKCTL_NARROW_H
#define PINKCTL_NARROW_H

/* coal's shapes, in their own frame: a sphere (radius), a capsule and a cylinder (radius,
 * half length, along z), a box (half sides) and a convex hull (its vertices); SHAPE_OTHER
 * is one the kernel does not know (the caller then measures the pair with coal). */
enum { SHAPE_SPHERE = 0, SHAPE_CAPSULE = 1, SHAPE_CYLINDER = 2, SHAPE_BOX = 3, SHAPE_CONVEX = 4,
       SHAPE_OTHER = 5 };

typedef struct PkShape {
    int kind;
    const double *param;  /* (3): radius, half length / half sides */
    const double *points; /* convex: (npoints, 3) */
    int npoints;
    const int *adj_start; /* convex: (npoints + 1) its vertex graph's lists in adj, or NULL */
    const int *adj;       /* each vertex's neighbours on the hull */
    int *warm;            /* convex: the last support vertex (where the next climb starts) */
    double m[12];         /* the shape's frame in the world: rotation row-major, translation */
} PkShape;

/* 1 when a direction proves the shapes at least threshold [m] apart; 0 when they are
 * closer (or GJK stops without a proof: then closer than threshold + 1e-9 relative). hint:
 * a first direction from b towards a (may be NULL). */
int pk_shapes_apart(const PkShape *a, const PkShape *b, double threshold, const double *hint);

/* the point of the shape farthest along the world direction d */
void pk_shape_support(const PkShape *s, const double *d, double *point);

/* min over the shape of n . x for a world direction n: its height along a plane's normal */
double pk_shape_lowest(const PkShape *s, const double *n);

/* The distance [m] of two shapes that do not overlap, by GJK with the witness points: wa on
 * a, wb on b (world frame), and lower, a proved lower bound of the distance (the best
 * support bound along the directions tried; GJK stops at 1e-10 relative, or as soon as
 * lower reaches enough: then the distance and points are GJK's estimate so far);
 * -INFINITY when they touch or overlap (no witness). hint: a first direction from b
 * towards a (may be NULL). */
double pk_shapes_distance(const PkShape *a, const PkShape *b, const double *hint, double enough,
                          double *wa, double *wb, double *lower);

#endif
